package ingest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestNoBenchmarkDataReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		rows                      schema.Counts
		present, expired, missing int
		want                      string
	}{
		{name: "new rows", rows: schema.Counts{New: 1, Failed: 5}, present: 3, want: ""},
		{name: "duplicate rows", rows: schema.Counts{Duplicate: 1}, present: 1, expired: 4, want: ""},
		{name: "nothing at all", want: "the run has no benchmark artifact (bmk_*, results_*)"},
		{name: "its only one expired", expired: 1, want: "its only benchmark artifact has expired"},
		{name: "all expired", expired: 5, want: "all 5 benchmark artifacts have expired"},
		{name: "all missing", missing: 2, want: "no benchmark artifact is in the tree (2 listed in artifacts.json but not in the tree)"},
		{name: "expired and missing", expired: 3, missing: 1, want: "no benchmark artifact is in the tree (3 expired, 1 listed in artifacts.json but not in the tree)"},
		{name: "present without rows", present: 2, want: "its 2 benchmark artifacts hold no benchmark rows"},
		{name: "only item failed", rows: schema.Counts{Failed: 1}, present: 1, want: "its only benchmark item failed"},
		{name: "all failed", rows: schema.Counts{Failed: 4}, present: 2, want: "all 4 benchmark items failed"},
		{name: "failed, unmapped, skipped", rows: schema.Counts{Failed: 1, Unmapped: 2, Skipped: 3}, present: 2,
			want: "none of its 6 benchmark items landed (1 failed, 2 unmapped, 3 skipped)"},
		{name: "skipped only", rows: schema.Counts{Skipped: 2}, present: 1, want: "none of its 2 benchmark items landed (2 skipped)"},
		{name: "failed, and more expired", rows: schema.Counts{Failed: 2}, present: 1, expired: 1, missing: 1,
			want: "all 2 benchmark items failed; 2 more benchmark artifacts are absent (1 expired, 1 listed in artifacts.json but not in the tree)"},
		{name: "failed, and one more expired", rows: schema.Counts{Failed: 1}, present: 1, expired: 1,
			want: "its only benchmark item failed; 1 more benchmark artifact is absent (1 expired)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, noBenchmarkData(tt.rows, tt.present, tt.expired, tt.missing, "artifacts.json"))
		})
	}
}

func TestNameListIsCapped(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 23 {
		names = append(names, fmt.Sprintf("a%02d", i))
	}
	require.Equal(t, "a00, a01", nameList(names[:2]))
	got := nameList(names)
	require.Contains(t, got, "a19 … and 3 more")
	require.NotContains(t, got, "a20")
}
