package changelog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/internal/stagetest"
	"github.com/inferencex/ingest/ingest/stages/changelog"
)

// The run's changelog entries are written once the rows they describe
// are.
func TestStageWritesEntries(t *testing.T) {
	r := stagetest.Open(t, generate.Options{Points: 3, Seed: 10, RunID: 920501, Evals: 1, EvalDocs: 2})
	m, sum := r.Manifest, r.Env.Sum
	require.Positive(t, m.ChangelogEntries)
	c, err := changelog.Run(t.Context(), r.W, r.Env)
	require.NoError(t, err)
	sum.AddCounters(c)
	require.Empty(t, sum.Failures)
	require.Equal(t, int64(m.ChangelogEntries), sum.Stats.ChangelogEntriesWritten)
}
