package ingest_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
)

// BenchmarkIngestTelemetry ingests a generated run of 2000 points whose
// points carry telemetry (nvidia-smi per fixed-seq point, DCGM bundles per
// multinode job: 7.9 million samples),
// into an empty database and again. It reports GPU-metric samples per
// second of the whole ingest (opening the tree included) and the peak live
// Go heap.
//
//	go test ./ingest -run '^$' -bench IngestTelemetry -benchtime 3x
//
// INGEST_BENCH_TELEMETRY_TREE=DIR reuses a tree written by
// `go run ./fixtures/gen -out DIR -points 2000 -telemetry`.
func BenchmarkIngestTelemetry(b *testing.B) {
	dir := os.Getenv("INGEST_BENCH_TELEMETRY_TREE")
	if dir == "" {
		dir = b.TempDir()
		_, err := generate.Write(dir, generate.Options{Points: 2000, Seed: 1, Telemetry: true})
		require.NoError(b, err)
	}
	b.Run("first", func(b *testing.B) { benchTelemetry(b, dir, false) })
	b.Run("rerun", func(b *testing.B) { benchTelemetry(b, dir, true) })
}

func benchTelemetry(b *testing.B, dir string, rerun bool) {
	var peak, peakTotal uint64
	var samples int64
	var took time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := measureIngest(b, dir, rerun, &peak, &peakTotal)
		took += r.took
		sum := r.sum
		if rerun {
			require.Zero(b, sum.Stats.GPUMetricSamplesNew)
			require.Zero(b, sum.Rows.Power.New)
		} else {
			require.Zero(b, sum.Rows.Power.Duplicate)
			samples += sum.Stats.GPUMetricSamplesNew
		}
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/ingest")
	if !rerun {
		b.ReportMetric(float64(samples)/took.Seconds(), "samples/s")
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
	b.ReportMetric(float64(peakTotal)/(1<<20), "peak-go-total-MiB")
}
