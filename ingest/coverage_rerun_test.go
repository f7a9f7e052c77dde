package ingest_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// TestCoverageGuardRerunsAndLosses ingests a generated run (every row
// shape: single-node and multinode fixed-seq, AgentX with and without raw
// siblings), then 20 re-runs of its configurations measured with other
// seeds, under --coverage-guard refuse: none is a coverage loss, so none is
// refused. A run that measures only part of the plan again drops points
// the curves showed: the guard refuses it and writes nothing.
func TestCoverageGuardRerunsAndLosses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := generate.Options{Points: 120, Seed: 31, AgentX: 6, RunID: 7_000_000}
	write := func(o generate.Options) string {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(o.RunID))
		_, err := generate.Write(dir, o)
		require.NoError(t, err)
		return dir
	}
	cfg := ingest.Config{CoverageGuard: schema.CoverageGuardRefuse}
	first := e.mustIngest(write(plan), cfg)
	require.NotNil(t, first.Impact)
	require.Positive(t, first.Impact.CurvesTouched)

	flagged := 0
	for seed := int64(1); seed <= 20; seed++ {
		o := plan
		o.MeasureSeed, o.RunID = seed, plan.RunID+seed
		sum, err := e.ingest(write(o), cfg)
		require.NoError(t, err, "re-run %d", seed)
		imp := sum.Impact
		require.NotNil(t, imp)
		require.Equal(t, first.Impact.CurvesTouched, imp.CurvesTouched, "re-run %d touches the same curves", seed)
		require.Equal(t, imp.CurvesTouched, imp.CurvesChanged, "re-run %d re-measures every curve", seed)
		require.Zero(t, imp.PointsDropped, "re-run %d", seed)
		for _, c := range imp.Curves {
			if len(c.CoverageLoss) > 0 {
				t.Logf("re-run %d: %s: %v", seed, c.Key, c.CoverageLoss)
			}
		}
		flagged += imp.CoverageLossCurves
	}
	require.Zero(t, flagged, "curves flagged over 20 re-runs of %d curves", first.Impact.CurvesTouched)

	// The same plan cut short: the points it no longer measures are gone
	// from their curves.
	part := plan
	part.Points, part.AgentX, part.MeasureSeed, part.RunID = 80, 4, 21, plan.RunID+21
	sum, err := e.ingest(write(part), cfg)
	require.Error(t, err)
	require.NotNil(t, sum.Impact)
	require.True(t, sum.Impact.Refused)
	require.Positive(t, sum.Rows.Benchmark.New+sum.Rows.Benchmark.Duplicate, "a refused run reports what it would have written")
	require.Contains(t, sum.AbortReason, "--accept-coverage-loss "+sum.Impact.LossToken+" (or all)")
	require.Positive(t, sum.Impact.PointsDropped)
	require.Positive(t, sum.Impact.CoverageLossCurves)
}
