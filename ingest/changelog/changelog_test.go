package changelog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/changelog"
)

func ptr(s string) *string { return &s }

// The producer's file: every entry kept, in order.
func TestParseHeadChangelog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "head_changelog_metadata.json"))
	require.NoError(t, err)
	defer f.Close()
	cl, problems, err := changelog.Parse(f)
	require.NoError(t, err)
	require.Empty(t, problems)
	require.Equal(t, changelog.Changelog{
		BaseRef: "1845f60558a952f3de8d3c762b068a83671f76af",
		HeadRef: "843c6254ff69b567f772f6a5fd97675af3d04431",
		Entries: []changelog.Entry{
			{ConfigKeys: []string{"minimaxm3-fp4-b300-trtllm-agentic-mtp"},
				Description: "Refresh with lower stream interval to collect correct client metrics",
				PRLink:      ptr("https://github.com/SemiAnalysisAI/InferenceX/pull/2685"), ScenarioTypes: []string{"agentic-coding"}},
			{ConfigKeys: []string{"dsv4-fp4-b200-vllm-agentic-mtp"},
				Description: "Serve the TP8 arm with FULL_AND_PIECEWISE cudagraphs\nReplace the TP8 concurrency list",
				PRLink:      ptr("https://github.com/SemiAnalysisAI/InferenceX/pull/2707"), ScenarioTypes: []string{"agentic-coding"}},
		},
	}, cl)
	require.False(t, cl.EvalsOnly())
}

// A real newer file with require-power and no entries is unusable: the
// run falls back to its metadata.
func TestParseRequirePowerWithoutEntries(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "powerx_changelog_metadata.json"))
	require.NoError(t, err)
	defer f.Close()
	_, _, err = changelog.Parse(f)
	var unusable changelog.ErrUnusable
	require.True(t, errors.As(err, &unusable), "%v", err)
}

func TestParseCases(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		entries   int
		problems  int
		problem   string // a part of the first problem's reason
		evalsOnly bool
		err       string
		check     func(t *testing.T, cl changelog.Changelog)
	}{
		{name: "empty", data: "", err: "empty file"},
		{name: "not json", data: "{", err: "not a changelog object"},
		{name: "array", data: "[]", err: "not a changelog object"},
		{name: "no refs", data: `{"entries": [{"config-keys": ["a"]}]}`, err: "no base_ref/head_ref"},
		{name: "no entries", data: `{"base_ref": "a", "head_ref": "b", "entries": []}`, err: "no entries"},
		{name: "evals-only", data: `{"base_ref": "a", "head_ref": "b", "entries": [{"config-keys": ["x"], "description": "d"},
			{"config-keys": ["y"], "description": ["e"], "evals-only": true}]}`, entries: 2, evalsOnly: true},
		{name: "bad entries kept apart", data: `{"base_ref": "a", "head_ref": "b", "entries": [3, {"config-keys": "nope"},
			{"config-keys": ["ok"], "description": {"x": 1}}, {"config-keys": ["ok"], "description": "fine"}]}`, entries: 1, problems: 3},
		{name: "pr link from description, placeholders kept", data: `{"base_ref": "a", "head_ref": "b", "entries": [
			{"config-keys": ["dsr1*", " "], "description": ["Fix things", "PR: https://github.com/SemiAnalysisAI/InferenceX/pull/77"]},
			{"config-keys": ["k"], "description": "x", "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX", "append-only": true, "eval-min-prefill-ep": 4}]}`,
			entries: 2, check: func(t *testing.T, cl changelog.Changelog) {
				require.Equal(t, []string{"dsr1*"}, cl.Entries[0].ConfigKeys)
				require.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/pull/77", *cl.Entries[0].PRLink)
				require.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX", *cl.Entries[1].PRLink)
				require.True(t, cl.Entries[1].AppendOnly)
				require.Equal(t, 4, *cl.Entries[1].EvalMinPrefillEP)
			}},
		{name: "empty entries fail", data: `{"base_ref": "a", "head_ref": "b", "entries": [{}, {"config-keys": [], "description": ""},
			{"config-keys": [" "], "description": null}, {"config-keys": ["k"]}, {"description": "d"}]}`, entries: 2, problems: 3,
			check: func(t *testing.T, cl changelog.Changelog) {
				require.Equal(t, []string{"k"}, cl.Entries[0].ConfigKeys)
				require.Equal(t, "d", cl.Entries[1].Description)
			}},
		{name: "only empty entries", data: `{"base_ref": "a", "head_ref": "b", "entries": [{}]}`, problems: 1, err: "no entries"},
		{name: "bad eval-min-prefill-ep", data: `{"base_ref": "a", "head_ref": "b", "entries": [{"config-keys": ["k"], "eval-min-prefill-ep": -7},
			{"config-keys": ["k"], "eval-min-prefill-ep": 0}, {"config-keys": ["k"], "eval-min-prefill-ep": 4294967296},
			{"config-keys": ["k"], "eval-min-prefill-ep": 2.5}, {"config-keys": ["k"], "eval-min-prefill-ep": "8"},
			{"config-keys": ["k"], "eval-min-prefill-ep": 8}]}`, entries: 1, problems: 5,
			problem: "entry 0: eval-min-prefill-ep -7 is not an integer from 1 to 2147483647"},
		{name: "too many entries", data: `{"base_ref": "a", "head_ref": "b", "entries": [` + strings.Repeat(`{"config-keys": ["k"]},`, changelog.MaxEntries) + `{"config-keys": ["k"]}]}`,
			err: "10001 entries, more than the 10000 allowed"},
		{name: "entries at the bound", data: `{"base_ref": "a", "head_ref": "b", "entries": [` + strings.Repeat(`{"config-keys": ["k"]},`, changelog.MaxEntries-1) + `{"config-keys": ["k"]}]}`,
			entries: changelog.MaxEntries},
		// Never stripped or resolved silently (strictjson).
		{name: "NUL character fails the file", data: `{"base_ref": "a\u0000", "head_ref": "b", "entries": [{"config-keys": ["k"], "description": "x"}]}`,
			err: `field "base_ref": string holds a NUL`},
		{name: "NUL in an entry fails the file", data: `{"base_ref": "a", "head_ref": "b", "entries": [{"config-keys": ["k"], "description": "x\u0000y"}]}`,
			err: `field "entries[0].description": string holds a NUL`},
		{name: "duplicate key fails the file", data: `{"base_ref": "a", "head_ref": "b", "base_ref": "c", "entries": []}`,
			err: `duplicate key "base_ref"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, problems, err := changelog.Parse(strings.NewReader(tc.data))
			require.Len(t, problems, tc.problems)
			if tc.problem != "" {
				require.Contains(t, problems[0].Reason, tc.problem)
			}
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, cl.Entries, tc.entries)
			require.Equal(t, tc.evalsOnly, cl.EvalsOnly())
			if tc.check != nil {
				tc.check(t, cl)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	cl := changelog.Fallback(changelog.RunInfo{RunID: 42, Name: "  Run Sweep ", HeadSHA: "abc"})
	require.Equal(t, changelog.Changelog{BaseRef: "unknown", HeadRef: "abc", Fallback: true,
		Entries: []changelog.Entry{{ConfigKeys: []string{}, Description: "Run Sweep"}}}, cl)
	cl = changelog.Fallback(changelog.RunInfo{RunID: 42})
	require.Equal(t, "run-42", cl.HeadRef)
	require.Equal(t, "GitHub Actions run 42", cl.Entries[0].Description)
}
