package supplemental_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/supplemental"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestWriteKinds: the kind comes from the rows (task → evals, a metrics
// object → benchmarks), an empty array from the name; what is neither, or
// both, is refused with the file named.
func TestWriteKinds(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		kind, artifact   string
		err              string
	}{
		{"eval rows", "extra.json", `[{"task":"gsm8k","timestamp":"2026-01-02T03:04:05Z"}]`, supplemental.KindEvals, "eval_results_extra", ""},
		{"benchmark rows", "extra.json", `[{"hw":"h200","metrics":{"tput_per_gpu":1},"date":"2026-01-02"}]`, supplemental.KindBenchmarks, "results_extra", ""},
		{"empty evals by name", "supplemental-evals.json", `[]`, supplemental.KindEvals, "eval_results_supplemental-evals", ""},
		{"empty benchmarks by name", "supplemental-bmk.json", `[]`, supplemental.KindBenchmarks, "results_supplemental-bmk", ""},
		{"empty, nameless", "rows.json", `[]`, "", "", "the name says neither"},
		{"mixed", "rows.json", `[{"task":"gsm8k"},{"metrics":{}}]`, "", "", "mixes eval rows"},
		{"not an array", "rows.json", `{"task":"gsm8k"}`, "", "", "not a JSON array of rows"},
		{"metric clashes with a field", "b.json", `[{"hw":"h200","metrics":{"hw":1},"date":"2026-01-02"}]`, "", "", `row 0: metric "hw" is also a field of the row`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, tc.file, tc.body)
			tree, err := supplemental.Write(t.TempDir(), []string{p}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorContains(t, err, p)
				return
			}
			require.NoError(t, err)
			require.Len(t, tree.Files, 1)
			require.Equal(t, tc.kind, tree.Files[0].Kind)
			require.Equal(t, tc.artifact, tree.Files[0].Artifact)
		})
	}
}

// TestWriteDatesAndOrder: the run is dated by the newest row timestamp
// unless a date is given; eval rows become one-row files, newest
// description first (timestamp, else the time in the source results file
// name, later rows first on a tie); benchmark metrics are lifted.
func TestWriteDatesAndOrder(t *testing.T) {
	evals := writeFile(t, "ev.json", `[
		{"task":"gsm8k","timestamp":"2026-01-21T00:34:31Z"},
		{"task":"gsm8k","source":"eval_results/x/results_2026-02-19T16-05-08.926949.json"},
		{"task":"gsm8k"},
		{"task":"gsm8k"}
	]`)
	bmk := writeFile(t, "bmk.json", `[{"hw":"h200","conc":4,"metrics":{"tput_per_gpu":310.5},"date":"2026-01-15"}]`)
	dir := t.TempDir()
	tree, err := supplemental.Write(dir, []string{evals, bmk}, time.Time{})
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 21, 0, 34, 31, 0, time.UTC), tree.CreatedAt, "the newest timestamp; source times do not date the run")
	require.Equal(t, []string{"0-ev-row1.json", "1-ev-row0.json", "2-ev-row3.json", "3-ev-row2.json"}, listDir(t, filepath.Join(dir, "eval_results_ev")))
	var rows []map[string]any
	body, err := os.ReadFile(filepath.Join(dir, "results_bmk", "bmk.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(body, &rows))
	require.Equal(t, []map[string]any{{"hw": "h200", "conc": 4.0, "tput_per_gpu": 310.5, "date": "2026-01-15"}}, rows)
	require.Equal(t, []string{"2026-01-15"}, tree.Files[0].Dates)

	given := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tree, err = supplemental.Write(t.TempDir(), []string{bmk}, given)
	require.NoError(t, err)
	require.Equal(t, given, tree.CreatedAt)

	_, err = supplemental.Write(t.TempDir(), []string{writeFile(t, "supplemental-evals.json", `[]`)}, time.Time{})
	require.ErrorContains(t, err, "pass --date")
}
