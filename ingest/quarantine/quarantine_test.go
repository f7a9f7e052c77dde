package quarantine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	bmkSource = "bmk_dsr1_1k1k_fp8_vllm_tp8_conc64_h200-nv/agg_dsr1_1k1k_fp8_vllm_tp8_conc64_h200-nv.json"
	evalFile  = "eval_dsr1_1k8k_fp8_vllm_tp8_conc64_h200-nv_1/results_2026-10-01T12-00-00.json"
)

// missingISL is a per-config row the producer quarantined for its missing
// isl, as the per-job file holds it (indented, keys in another order).
const missingISL = `{
  "result_schema_version": 1, "hw": "h200-nv", "infmax_model_prefix": "dsr1", "framework": "vllm",
  "precision": "fp8", "osl": 1024, "conc": 64, "tput_per_gpu": 1234.5
}`

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func read(t *testing.T, lists map[string]string) (*Lists, error) {
	t.Helper()
	var l Lists
	for name, body := range lists {
		if err := l.Read(name, strings.NewReader(body)); err != nil {
			return &l, err
		}
	}
	return &l, nil
}

// The facts of the reference's etl/rejected-rows.test.ts.
func TestLists(t *testing.T) {
	var row any
	require.NoError(t, json.Unmarshal([]byte(missingISL), &row))
	fixed := strings.Replace(missingISL, `"osl": 1024`, `"isl": 1024, "osl": 1024`, 1)

	t.Run("no list: nothing to skip", func(t *testing.T) {
		var l Lists
		require.Zero(t, l.Benchmark+l.Eval)
		require.False(t, l.BenchmarkFile(bmkSource, []byte(missingISL)))
		require.False(t, l.EvalTask(evalFile, "gsm8k"))
	})
	t.Run("a benchmark file matches by path and content", func(t *testing.T) {
		l, err := read(t, map[string]string{"rejected_rows_bmk": mustJSON(t, []any{map[string]any{
			"source": bmkSource, "errors": []any{map[string]any{"type": "missing", "loc": []any{"isl"}, "msg": "Field required"}},
			"row": row}})})
		require.NoError(t, err)
		require.Equal(t, 1, l.Benchmark)
		require.True(t, l.Listed(bmkSource))
		require.True(t, l.BenchmarkFile(bmkSource, []byte(missingISL)))
		require.False(t, l.BenchmarkFile(strings.Replace(bmkSource, "conc64", "conc128", 1), []byte(missingISL)))
		require.False(t, l.BenchmarkFile(bmkSource, []byte(fixed)), "a later attempt re-uploaded the file with a valid row")
		require.True(t, l.BenchmarkFile(bmkSource, []byte(strings.Replace(missingISL, "1024", "1024.0", 1))), "numbers compare by value")
	})
	t.Run("eval tasks match by results file and task, in any download directory", func(t *testing.T) {
		l, err := read(t, map[string]string{"rejected_rows_eval_all": mustJSON(t, []any{map[string]any{
			"source": "eval_results/" + evalFile + " [gsm8k]",
			"errors": []any{map[string]any{"type": "finite_number", "loc": []any{"em_flexible"}, "msg": "Input should be finite"}},
			"row":    map[string]any{"result_schema_version": 1, "source": "eval_results/" + evalFile, "task": "GSM8K"}}})})
		require.NoError(t, err)
		require.Equal(t, 1, l.Eval)
		require.True(t, l.EvalTask(evalFile, "gsm8k"))
		require.True(t, l.EvalTask("downloads/"+evalFile, "gsm8k"))
		require.False(t, l.EvalTask(evalFile, "gpqa_diamond"))
		require.False(t, l.EvalTask(strings.Replace(evalFile, "_1/", "_2/", 1), "gsm8k"))
	})
	t.Run("a list that is not standard JSON fails", func(t *testing.T) {
		_, err := read(t, map[string]string{"rejected_rows_bmk": `[{"source": "` + bmkSource + `", "errors": [], "row": {"tput_per_gpu": NaN}}]`})
		require.ErrorContains(t, err, "not JSON")
	})
	for _, c := range []struct {
		name, artifact, body, reason string
	}{
		{"null", "rejected_rows_bmk", `null`, "not a JSON array of rejected rows"},
		{"an object", "rejected_rows_bmk", `{"source": "x"}`, "not a JSON array of rejected rows"},
		{"no source", "rejected_rows_bmk", `[{"errors": [], "row": {}}]`, "entry 0 has no source or row"},
		{"no row", "rejected_rows_bmk", `[{"source": "` + bmkSource + `", "errors": []}]`, "entry 0 has no source or row"},
		{"numeric source", "rejected_rows_bmk", `[{"source": 3, "row": {}}]`, "entry 0 has no source or row"},
		{"eval row without source", "rejected_rows_eval_all", `[{"source": "x [gsm8k]", "errors": [], "row": {"task": "gsm8k"}}]`,
			"entry 0 has no eval source or task"},
	} {
		t.Run("cannot identify its rows: "+c.name, func(t *testing.T) {
			_, err := read(t, map[string]string{c.artifact: c.body})
			require.EqualError(t, err, c.reason)
		})
	}
	t.Run("a null row is still a row", func(t *testing.T) {
		l, err := read(t, map[string]string{"rejected_rows_bmk": `[{"source": "a/b.json", "row": null}]`})
		require.NoError(t, err)
		require.True(t, l.BenchmarkFile("a/b.json", []byte("null")))
	})
}

func TestIsList(t *testing.T) {
	for name, want := range map[string]bool{
		"rejected_rows_bmk": true, "rejected_rows_eval_all": true, "rejected_rows_run_stats": false,
		"results_bmk": false, "eval_results_all": false,
	} {
		require.Equal(t, want, IsList(name), name)
	}
}
