package ingest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// rejectedEntry is one entry of a rejected_rows.json list.
func rejectedEntry(source string, row any, field string) map[string]any {
	return map[string]any{"source": source, "row": row,
		"errors": []any{map[string]any{"type": "missing", "loc": []any{field}, "msg": "Field required"}}}
}

// Rows the producer quarantined (rejected_rows_<p>, rejected_rows_eval_<p>)
// are skipped in the per-config artifacts that still carry them, when the
// path and the content match (reference etl/rejected-rows.ts): counted as
// read and skipped (details.quarantinedRows, quarantinedEvalRows), never
// written. A file a later attempt re-uploaded with another row is read.
// rejected_rows_run_stats is not read: run stats publish only accepted
// entries.
func TestQuarantinedRowsAreSkipped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 4, Seed: 7, Evals: 2, EvalDocs: 3})
	// This test's own benchmark rows: the generated ones stay as they are.
	bad := benchRow(48, map[string]any{"isl": nil})
	perJob(t, dir, "q_conc48", bad)
	reup := benchRow(96, nil)
	perJob(t, dir, "q_conc96", reup)
	listedReup := benchRow(96, map[string]any{"isl": nil})
	writeFile(t, filepath.Join(dir, "rejected_rows_bmk", "rejected_rows.json"), mustJSON(t, []any{
		rejectedEntry("bmk_q_conc48/agg_q_conc48.json", bad, "isl"),
		rejectedEntry("bmk_q_conc96/agg_q_conc96.json", listedReup, "isl"), // a stale list
	}))
	writeFile(t, filepath.Join(dir, "rejected_rows_run_stats", "rejected_rows.json"), `not read`)

	// One eval task of a per-config artifact, which the producer left out
	// of its aggregate.
	results, err := filepath.Glob(filepath.Join(dir, "eval_*", "results_*.json"))
	require.NoError(t, err)
	sort.Strings(results)
	require.NotEmpty(t, results)
	var doc struct {
		Results map[string]any `json:"results"`
	}
	data, err := os.ReadFile(results[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Results, 1)
	var task string
	for task = range doc.Results {
	}
	rel, err := filepath.Rel(dir, results[0])
	require.NoError(t, err)
	aggs, err := filepath.Glob(filepath.Join(dir, "eval_results_*", "*.json"))
	require.NoError(t, err)
	require.Len(t, aggs, 1)
	data, err = os.ReadFile(aggs[0])
	require.NoError(t, err)
	var aggRows, kept []map[string]any
	require.NoError(t, json.Unmarshal(data, &aggRows))
	for _, r := range aggRows {
		if !strings.Contains(r["source"].(string), "/"+filepath.Dir(rel)+"/") || r["task"] != task {
			kept = append(kept, r)
		}
	}
	require.Len(t, kept, len(aggRows)-1)
	writeFile(t, aggs[0], mustJSON(t, kept))
	writeFile(t, filepath.Join(dir, "rejected_rows_eval_all", "rejected_rows.json"), mustJSON(t, []any{
		rejectedEntry("eval_results/"+filepath.ToSlash(rel)+" ["+task+"]",
			map[string]any{"result_schema_version": 1, "source": "eval_results/" + filepath.ToSlash(rel), "task": strings.ToUpper(task)}, "em_strict"),
	}))

	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusSucceeded, sum.Status, "%v", sum.Failures)
	require.EqualValues(t, 3, sum.Details.RejectedRowsListed)
	require.EqualValues(t, 1, sum.Details.QuarantinedRows)
	require.EqualValues(t, 1, sum.Details.QuarantinedEvalRows)
	require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 48`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 96`), "the re-uploaded file is not the listed row")
	require.EqualValues(t, 1, sum.Rows.Eval.Skipped)
	require.EqualValues(t, m.EvalRows-2, sum.Rows.Eval.New+sum.Rows.Eval.Duplicate, "one per-config row and its aggregate copy are gone")
	require.Zero(t, e.count(`SELECT count(*) FROM eval_results WHERE source_artifact = $1`, filepath.Dir(rel)))
	require.Contains(t, sum.Notes, "2 rows the producer quarantined (rejected_rows_*) were skipped: 1 benchmark, 1 eval")

	// A rerun skips them again.
	again := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 1, again.Details.QuarantinedRows)
	require.Zero(t, again.Rows.Benchmark.New)
}

// A list that cannot be read, or that cannot identify its rows, fails the
// ingest: nothing is written, and the reason names the artifact and file.
func TestUnreadableQuarantineListAbortsTheIngest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, artifact, body, reason string
	}{
		{"not JSON", "rejected_rows_bmk", `[{"source": "a/b.json", "errors": [], "row": {"tput_per_gpu": NaN}}]`,
			"rejected_rows_bmk / rejected_rows.json: unreadable list of quarantined rows: not JSON: invalid character 'N' looking for beginning of value"},
		{"not a list", "rejected_rows_bmk", `null`,
			"rejected_rows_bmk / rejected_rows.json: unreadable list of quarantined rows: not a JSON array of rejected rows"},
		{"no row", "rejected_rows_bmk", `[{"source": "a/b.json", "errors": []}]`,
			"rejected_rows_bmk / rejected_rows.json: unreadable list of quarantined rows: entry 0 has no source or row"},
		{"eval entry without a task", "rejected_rows_eval_all", `[{"source": "x", "errors": [], "row": {"source": "a/b.json"}}]`,
			"rejected_rows_eval_all / rejected_rows.json: unreadable list of quarantined rows: entry 0 has no eval source or task"},
		{"no list in the artifact", "rejected_rows_bmk", "",
			"rejected_rows_bmk / rejected_rows.json: unreadable list of quarantined rows: cannot open: open rejected_rows.json: file does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			perJob(t, dir, "good", benchRow(4, nil))
			if c.body == "" {
				writeFile(t, filepath.Join(dir, c.artifact, "other.json"), `[]`)
			} else {
				writeFile(t, filepath.Join(dir, c.artifact, "rejected_rows.json"), c.body)
			}
			sum, err := e.ingest(dir, ingest.Config{Run: RunID(42, 1)})
			require.Error(t, err)
			require.Equal(t, schema.StatusAborted, sum.Status)
			require.Equal(t, c.reason, sum.AbortReason)
			require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results`))
		})
	}
}
