package benchmarks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestWinnersDecide: per point one winner — per-job before aggregate,
// newest attempt, then artifact, file and row as bytes — whatever the
// order copies arrive in; losers count as covered or stale, and a winner
// already stored is not written.
func TestWinnersDecide(t *testing.T) {
	t.Parallel()
	pa, pb, pc := [16]byte{1}, [16]byte{2}, [16]byte{3}
	copies := []schema.StagedCopy{
		{Point: pa, Seq: 0, Rank: schema.CopyRank{Aggregate: true, Artifact: "results_bmk"}},
		{Point: pa, Seq: 1, Rank: schema.CopyRank{AttemptRank: 1, Artifact: "bmk_a"}},
		{Point: pa, Seq: 2, Rank: schema.CopyRank{Artifact: "bmk_b"}},
		{Point: pb, Seq: 3, Rank: schema.CopyRank{Artifact: "bmk_a", File: "y", Row: 1}},
		{Point: pb, Seq: 4, Rank: schema.CopyRank{Artifact: "bmk_Z", File: "y", Row: 2}},
		{Point: pb, Seq: 5, Rank: schema.CopyRank{Artifact: "bmk_Z", File: "y", Row: 1}},
		{Point: pc, Seq: 6, Rank: schema.CopyRank{Aggregate: true, Artifact: "results_bmk", Row: 3}, Unchanged: true},
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}, {2, 4, 0, 6, 1, 3, 5}} {
		w := NewWinners()
		for _, i := range order {
			w.Add(copies[i])
		}
		require.Equal(t, Ranking{Write: []int32{2, 5}, Staged: 7, Winners: 3, Covered: 1, Stale: 3}, w.Result(), "order %v", order)
		var arts []string
		for _, p := range w.Points() {
			arts = append(arts, p.Artifact)
		}
		require.Equal(t, []string{"bmk_Z", "bmk_b", "results_bmk"}, arts, "source order")
	}
}
