package benchmarks_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/internal/stagetest"
)

// Every point of a run with retried jobs is written once: per-job rows win
// over the aggregate's copies and the newest attempt over older ones, and
// every row read is accounted for as written or skipped.
func TestStageWritesEveryPointOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    generate.Options
	}{
		{"folders", generate.Options{Points: 24, Seed: 3, RunID: 920101, Retries: 3}},
		{"zips, no listing", generate.Options{Points: 12, Seed: 4, RunID: 920102, Zip: true, NoListing: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stagetest.Open(t, tc.o)
			m, sum := r.Manifest, r.Env.Sum
			require.Empty(t, sum.Failures)
			require.Equal(t, int64(m.RawBenchmarkRows), sum.Stats.RawBenchmarkRows)
			require.Equal(t, int64(m.Points), r.Applied.BenchmarkNew, "every point new")
			require.Zero(t, sum.Rows.Benchmark.Duplicate)
			skipped := sum.Rows.Benchmark.Skipped
			require.Equal(t, int64(m.AggregateRows+m.StaleRows), skipped, "aggregate copies and stale attempts skipped")
			require.Equal(t, r.Staged, r.Applied.BenchmarkStaged, "the store received what the stage sent")
			require.Equal(t, int64(m.RunStatsKeys), r.Applied.RunStatsNew)
		})
	}
}
