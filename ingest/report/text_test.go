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

// TestTextViewRefresh: the console report says what the refresh of
// latest_benchmarks after the commit did, and nothing when none ran.
func TestTextViewRefresh(t *testing.T) {
	for _, tc := range []struct {
		refresh *schema.ViewRefresh
		want    string
	}{
		{&schema.ViewRefresh{View: "latest_benchmarks", Status: schema.RefreshRefreshed, Changes: 2, DurationMS: 31}, "latest_benchmarks refreshed in 31 ms (2 changes)\n"},
		{&schema.ViewRefresh{View: "latest_benchmarks", Status: schema.RefreshRefreshed, Changes: 3, DurationMS: 4, Curves: 1, Added: 2}, "latest_benchmarks refreshed in 4 ms (3 changes, 1 curve)\n"},
		{&schema.ViewRefresh{View: "latest_benchmarks", Status: schema.RefreshSkipped}, "latest_benchmarks unchanged: refresh skipped\n"},
		{&schema.ViewRefresh{View: "latest_benchmarks", Status: schema.RefreshFailed, Error: "cannot refresh\nconcurrently"}, "latest_benchmarks refresh FAILED: the view is stale until the next ingest or `ingest refresh` (cannot refresh concurrently)\n"},
	} {
		s := &schema.Summary{Status: schema.StatusSucceeded, Run: schema.RunIdentity{SourceRunID: 1}}
		s.Details.LatestBenchmarks = tc.refresh
		require.Contains(t, Text(s), tc.want)
	}
	require.NotContains(t, Text(&schema.Summary{Status: schema.StatusSucceeded}), "latest_benchmarks")
}

// TestTextTerminal: on a terminal the verdict is the last line too, in
// the colour of the outcome, and the failures are red; without colour no
// escape sequence is written.
func TestTextTerminal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		s      *schema.Summary
		colour string
	}{
		{"clean", exampleSummary(), "\033[32m"},
		{"failures", failuresSummary(), "\033[33m"},
		{"aborted", abortedSummary(), "\033[31m"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plain := TextTerminal(tt.s, false)
			headline, _, _ := strings.Cut(plain, "\n")
			lines := strings.Split(strings.TrimSuffix(plain, "\n"), "\n")
			require.Equal(t, headline, lines[len(lines)-1], "the verdict is the last line")
			require.NotContains(t, plain, "\033[")
			require.True(t, strings.HasPrefix(plain, Text(tt.s)))

			coloured := TextTerminal(tt.s, true)
			require.True(t, strings.HasSuffix(coloured, "\033[1m"+tt.colour+headline+"\033[0m\n"), coloured)
			if len(tt.s.Failures) > 0 {
				require.Contains(t, coloured, "\033[31mfailures (")
			}
		})
	}
}

// TestTextTerminalShortensLongNames: on a terminal a full-length artifact
// name (about 300 characters) is cut in the middle, keeping its head and
// tail, so a note naming it does not wrap; short words and URLs stay
// whole; Text, JSON and Markdown keep the name whole.
func TestTextTerminalShortensLongNames(t *testing.T) {
	t.Parallel()
	name := "bmk_qwen3.5_8k1k_" + strings.Repeat("fp8_vllm_tp8_ep1_", 16) + "conc1024_b200-dgxc_09_1234567"
	url := "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/18234567890/attempts/1?" + strings.Repeat("x", 40)
	s := exampleSummary()
	s.Notes = []string{"trace skipped: missing sibling artifact " + name, "see " + url}

	got := TextTerminal(s, false)
	require.NotContains(t, got, name)
	require.Contains(t, got, "note: trace skipped: missing sibling artifact bmk_qwen3.5_8k1k_fp8_vllm_tp8_ep…024_b200-dgxc_09_1234567\n")
	require.Contains(t, got, "note: see "+url+"\n", "a URL stays whole")
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "note: trace skipped") {
			require.LessOrEqual(t, len([]rune(l)), 110)
		}
	}

	require.Contains(t, Text(s), name, "not on a terminal: whole")
	var js strings.Builder
	require.NoError(t, JSON(&js, s))
	require.Contains(t, js.String(), name)
	require.Contains(t, Markdown(s), strings.ReplaceAll(name, "_", `\_`))
}
