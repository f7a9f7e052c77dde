package github_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/schema"
)

func TestSelect(t *testing.T) {
	t.Parallel()
	at := func(m int) time.Time { return time.Date(2026, 11, 20, 8, m, 0, 0, time.UTC) }
	art := func(id int64, name string, m int, expired bool) schema.ArtifactListing {
		return schema.ArtifactListing{ID: id, Name: name, CreatedAt: at(m), Expired: expired}
	}
	tests := []struct {
		name          string
		source, merge int64
		src, mrg      []schema.ArtifactListing
		wantIDs       []int64
		wantErr       string
	}{
		{name: "newest unexpired per exact name", source: 1, merge: 1,
			src:     []schema.ArtifactListing{art(10, "bmk_a", 1, false), art(11, "bmk_a", 5, false), art(12, "bmk_a", 9, true), art(13, "bmk_b", 2, false)},
			wantIDs: []int64{11, 13}},
		{name: "equal created_at: the larger id", source: 1, merge: 1,
			src:     []schema.ArtifactListing{art(21, "run-stats", 3, false), art(20, "run-stats", 3, false)},
			wantIDs: []int64{21}},
		{name: "names differing only in runner are kept apart", source: 1, merge: 1,
			src:     []schema.ArtifactListing{art(1, "bmk_x_b200-dgxc_03", 1, false), art(2, "bmk_x_b200-dgxc_07", 2, false)},
			wantIDs: []int64{1, 2}},
		{name: "reuse: changelog from the merge run", source: 1, merge: 2,
			src:     []schema.ArtifactListing{art(1, "bmk_a", 1, false), art(2, "changelog-metadata", 1, false)},
			mrg:     []schema.ArtifactListing{art(7, "changelog-metadata", 4, false), art(8, "changelog-metadata", 6, false), art(9, "bmk_other", 6, false)},
			wantIDs: []int64{1, 8}},
		{name: "reuse: merge changelog missing", source: 1, merge: 2,
			src:     []schema.ArtifactListing{art(1, "bmk_a", 1, false), art(2, "changelog-metadata", 1, false)},
			mrg:     []schema.ArtifactListing{art(7, "changelog-metadata", 4, true)},
			wantErr: "no unexpired changelog-metadata artifact found on merge run 2"},
		{name: "only expired artifacts", source: 1, merge: 1,
			src:     []schema.ArtifactListing{art(1, "bmk_a", 1, true), art(2, "results_bmk", 1, true)},
			wantErr: "no unexpired artifacts found on source run 1 (2 listed, 2 expired)"},
		{name: "reuse: a source with only its changelog has nothing to ingest", source: 1, merge: 2,
			src:     []schema.ArtifactListing{art(2, "changelog-metadata", 1, false)},
			mrg:     []schema.ArtifactListing{art(7, "changelog-metadata", 4, false)},
			wantErr: "no unexpired artifacts found on source run 1"},
		{name: "hostile name: selected, laid out under a safe local name", source: 1, merge: 1,
			src:     []schema.ArtifactListing{art(1, "../etc", 1, false), art(2, "bench results (retry #2)", 1, false)},
			wantIDs: []int64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := github.Select(tt.source, tt.merge, tt.src, tt.mrg)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var ids []int64
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			require.Equal(t, tt.wantIDs, ids)
		})
	}
}
