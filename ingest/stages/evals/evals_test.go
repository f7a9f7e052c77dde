package evals_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/internal/stagetest"
	"github.com/inferencex/ingest/ingest/stages/evals"
)

// The eval rows of the per-config directories and the aggregate are
// written once per natural key, and every sample line of their samples
// files is stored.
func TestStageWritesEvalsAndSamples(t *testing.T) {
	r := stagetest.Open(t, generate.Options{Points: 6, Seed: 5, RunID: 920201, Evals: 3, EvalDocs: 7})
	m, sum := r.Manifest, r.Env.Sum
	c, err := evals.Read(r.Env).Write(t.Context(), r.W)
	require.NoError(t, err)
	sum.AddCounters(c)
	require.Empty(t, sum.Failures)
	require.Equal(t, m.Rows(false).Eval, sum.Rows.Eval)
	require.Equal(t, int64(m.EvalRows), sum.Details.EvalRows)
	require.Equal(t, int64(m.EvalSampleLines), sum.Details.EvalSampleLines)
	require.Equal(t, int64(m.EvalSampleLines), sum.Stats.EvalSamplesNew, "every sample line stored")
	require.Positive(t, sum.Details.EvalSampleTextsNew)
}

// A run without evals writes none and counts none.
func TestStageWithoutEvals(t *testing.T) {
	r := stagetest.Open(t, generate.Options{Points: 2, Seed: 6, RunID: 920202})
	c, err := evals.Read(r.Env).Write(t.Context(), r.W)
	require.NoError(t, err)
	r.Env.Sum.AddCounters(c)
	require.Zero(t, r.Env.Sum.Rows.Eval)
	require.Zero(t, r.Env.Sum.Stats.EvalSamplesNew)
}
