package ingest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
)

// BenchmarkEvals ingests a generated run with 50 gsm8k evals, each with a
// samples file of docs documents × 2 filters (1319 is the real test split,
// 6–8 KB a line, about 19 MB a file), first into an empty database and then
// again (every sample a duplicate). It reports samples/s and MB/s of
// samples files, wall time per ingest, and the peak live Go heap and the
// peak memory the Go runtime holds from the OS while ingesting. Two file
// sizes show that memory does not grow with the size of the files.
//
//	go test ./ingest -run '^$' -bench Evals -benchtime 1x
func BenchmarkEvals(b *testing.B) {
	for _, docs := range []int{330, generate.GSM8KDocs} {
		dir := b.TempDir()
		m, err := generate.Write(dir, generate.Options{Points: 10, Seed: 1, Evals: 50, EvalDocs: docs})
		require.NoError(b, err)
		for _, rerun := range []bool{false, true} {
			name := fmt.Sprintf("evals=50/docs=%d/first", docs)
			if rerun {
				name = fmt.Sprintf("evals=50/docs=%d/rerun", docs)
			}
			b.Run(name, func(b *testing.B) { benchEvals(b, dir, m, rerun) })
		}
	}
}

func benchEvals(b *testing.B, dir string, m generate.Manifest, rerun bool) {
	var peakHeap, peakTotal uint64
	var took time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := measureIngest(b, dir, rerun, &peakHeap, &peakTotal)
		took += r.took
		sum := r.sum
		require.EqualValues(b, m.EvalSampleLines, sum.Details.EvalSampleLines)
		if rerun {
			require.Zero(b, sum.Stats.EvalSamplesNew)
		} else {
			require.EqualValues(b, m.EvalSampleLines, sum.Stats.EvalSamplesNew)
		}
	}
	secs := took.Seconds() / float64(b.N)
	b.ReportMetric(secs*1000, "ms/ingest")
	b.ReportMetric(float64(m.EvalSampleLines)/secs, "samples/s")
	b.ReportMetric(float64(m.EvalBytes)/(1<<20)/secs, "MB/s")
	b.ReportMetric(float64(m.EvalBytes)/(1<<20), "eval-MB")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-live-heap-MiB")
	b.ReportMetric(float64(peakTotal)/(1<<20), "peak-go-total-MiB")
}
