package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestTextGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		summary  *schema.Summary
		golden   string
		headline string
	}{
		{"success", exampleSummary(), "text_success.golden",
			"Ingest report — ✅ Results ingested into the production database."},
		{"completed with failures", failuresSummary(), "text_failures.golden",
			"Ingest report — ⚠️ Results ingested into the staging database, with 26 failures."},
		{"aborted", abortedSummary(), "text_aborted.golden",
			"Ingest report — ❌ Ingest failed: store: commit run 18234567890: connection reset by peer. Nothing was written."},
		{"no benchmark data", noBenchmarkSummary(), "text_no_benchmark_data.golden",
			"Ingest report — ⚠️ No benchmark data in this run: all 3 benchmark artifacts have expired. The rest was ingested into the production database."},
		{"hostile input", hostileSummary(), "text_hostile.golden",
			"Ingest report — ⚠️ Results ingested into the prod|<b>uction</b> database, with 26 failures."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Text(tt.summary)
			requireGolden(t, tt.golden, got)
			require.Equal(t, tt.headline, strings.Split(got, "\n")[0])
			require.NotContains(t, got, "\x1b", "no terminal escape sequences from input")
		})
	}
}

func TestTextLimitsLists(t *testing.T) {
	t.Parallel()
	got := Text(failuresSummary())
	require.Contains(t, got, "failures (26):\n")
	require.Contains(t, got, "  … and 16 more\n")
	require.Contains(t, got, "experimental-model-09 … and 13 more\n")
	require.NotContains(t, got, "experimental-model-10")
	require.Contains(t, got, "unmapped precision: (empty), nvfp6\n")
	require.Contains(t, got, "note: attempt order was inferred")
}
