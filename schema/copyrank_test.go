package schema_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestCompareCopies: a per-job file beats an aggregate whatever its upload,
// the newest upload beats an older one, then artifact, file and row.
func TestCompareCopies(t *testing.T) {
	t.Parallel()
	base := schema.CopyRank{AttemptRank: 1, Artifact: "bmk_b", File: "b.json", Row: 1}
	with := func(f func(*schema.CopyRank)) schema.CopyRank { r := base; f(&r); return r }
	for _, tc := range []struct {
		name   string
		winner schema.CopyRank
	}{
		{"per-job file over a newer aggregate", base},
		{"newest upload", with(func(r *schema.CopyRank) { r.AttemptRank = 0; r.Artifact = "bmk_z" })},
		{"artifact", with(func(r *schema.CopyRank) { r.Artifact = "bmk_a"; r.File = "z.json" })},
		{"file", with(func(r *schema.CopyRank) { r.File = "a.json"; r.Row = 9 })},
		{"row", with(func(r *schema.CopyRank) { r.Row = 0 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loser := base
			if tc.winner == base {
				loser = with(func(r *schema.CopyRank) { r.Aggregate = true; r.AttemptRank = 0 })
			}
			require.Negative(t, schema.CompareCopies(tc.winner, loser))
			require.Positive(t, schema.CompareCopies(loser, tc.winner))
		})
	}
	require.Zero(t, schema.CompareCopies(base, base))
}
