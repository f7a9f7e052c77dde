package ingest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
)

// BenchmarkIngest ingests generated runs of several sizes, first into an
// empty database and then again (the rerun finds every row). It reports
// wall time per ingest (opening the tree included) and the peak live Go
// heap (as measured after each GC) while ingesting. Row payloads are
// streamed, so the live heap grows only with per-artifact metadata and
// per-point hashes, not with the size of the files.
//
//	go test ./ingest -run '^$' -bench Ingest -benchtime 3x
func BenchmarkIngest(b *testing.B) {
	for _, points := range []int{1000, 5000} {
		dir := b.TempDir()
		_, err := generate.Write(dir, generate.Options{Points: points, Seed: 1, Retries: points / 100})
		require.NoError(b, err)
		b.Run(fmt.Sprintf("points=%d/first", points), func(b *testing.B) {
			benchIngest(b, dir, false)
		})
		b.Run(fmt.Sprintf("points=%d/rerun", points), func(b *testing.B) {
			benchIngest(b, dir, true)
		})
	}
}

func benchIngest(b *testing.B, dir string, rerun bool) {
	var peak, peakTotal uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sum := measureIngest(b, dir, rerun, &peak, &peakTotal).sum
		if rerun {
			require.Zero(b, sum.Rows.Benchmark.New)
		} else {
			require.Zero(b, sum.Rows.Benchmark.Duplicate)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/ingest")
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
}
