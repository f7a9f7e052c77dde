package ingest_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// agenticEvalMeta is the meta_env.json of a single-node AgentX eval job.
func agenticEvalMeta(t *testing.T, model, prefix string, conc int) string {
	return mustJSON(t, map[string]any{"is_multinode": false, "framework": "vllm", "precision": "fp4", "spec_decoding": "none",
		"tp": 4, "ep": 1, "dp_attention": false, "conc": conc, "model": model, "infmax_model_prefix": prefix,
		"hw": "b200", "isl": "0", "osl": "0", "scenario_type": "agentic-coding"})
}

// vendorResult is an inferencex-eval-v1 compatibility result as the
// producer's vendor adapters write it (infx/evals/vendor_artifacts.py).
func vendorResult(adapter, task string, score float64, original, effective int, integration map[string]any) map[string]any {
	r := map[string]any{
		"result_format": "inferencex-eval-v1", "eval_adapter": adapter, "model_name": "served-model",
		"results": map[string]any{task: map[string]any{"exact_match,strict-match": score, "exact_match_stderr,strict-match": 0.0}},
		"configs": map[string]any{task: map[string]any{"metric_list": []any{map[string]any{"metric": "exact_match"}},
			"filter_list": []any{map[string]any{"name": "strict-match"}}}},
		"n-samples": map[string]any{task: map[string]any{"original": original, "effective": effective}},
	}
	if integration != nil {
		r["integration_error"] = integration
	}
	return r
}

// The producer's own eval harnesses (results_<adapter>_*.json with
// result_format inferencex-eval-v1: Kimi and MiniMax vendor verifiers,
// BFCL) land like lm-eval results: the strict-match score or BFCL's acc,
// n_eff from the effective samples. An infrastructure failure — a result
// carrying integration_error, or zero effective samples — is a failed
// item naming artifact, file and error, counted in
// details.evalIntegrationErrors, never a score of 0. An unknown
// result_format is refused.
func TestProducerEvalHarnesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	eval := func(name, model, prefix string, conc int, file string, result any) {
		writeFile(t, filepath.Join(dir, name, "meta_env.json"), agenticEvalMeta(t, model, prefix, conc))
		writeFile(t, filepath.Join(dir, name, file), mustJSON(t, result))
	}
	eval("eval_kimik3_conc4", "moonshotai/Kimi-K3", "kimik3", 4, "results_kimi_vendor_2026-11-02T10-00-00.000001.json",
		vendorResult("kimi-vendor-verifier", "kimi_tool_call_schema_full", 0.9901960784313726, 408, 408, nil))
	eval("eval_minimaxm3_conc8", "MiniMaxAI/MiniMax-M3", "minimaxm3", 8, "results_minimax_vendor_2026-11-02T11-00-00.000001.json",
		vendorResult("minimax-provider-verifier", "minimax_m3_full", 0.0, 102, 0,
			map[string]any{"type": "TimeoutError", "message": "stock verifier exceeded 25200 s"}))
	eval("eval_minimaxm3_conc16", "MiniMaxAI/MiniMax-M3", "minimaxm3", 16, "results_minimax_vendor_2026-11-02T12-00-00.000001.json",
		vendorResult("minimax-provider-verifier", "minimax_m3_smoke", 0.0, 1, 0, nil))
	eval("eval_kimik3_conc32", "moonshotai/Kimi-K3", "kimik3", 32, "results_bfcl.json", map[string]any{
		"result_format": "inferencex-eval-v1", "eval_adapter": "bfcl", "model_name": "served-model",
		"results": map[string]any{
			"bfcl_smoke":         map[string]any{"acc,none": 0.75, "acc_stderr,none": 0.25},
			"bfcl_simple_python": map[string]any{"acc,none": 1.0, "acc_stderr,none": 0.0},
		},
		"n-samples": map[string]any{"bfcl_smoke": map[string]any{"original": 4, "effective": 4},
			"bfcl_simple_python": map[string]any{"original": 1, "effective": 1}},
	})
	eval("eval_kimik3_conc64", "moonshotai/Kimi-K3", "kimik3", 64, "results_kimi_vendor_2026-11-02T13-00-00.000001.json",
		map[string]any{"result_format": "inferencex-eval-v2", "results": map[string]any{"x": map[string]any{"acc,none": 1.0}}})

	// The collector's aggregate row of the failed MiniMax eval (its
	// build_row: scores null, n_eff 0, infrastructure_success false).
	writeFile(t, filepath.Join(dir, "eval_results_all", "agg_eval_all.json"), mustJSON(t, []any{map[string]any{
		"is_multinode": false, "model_prefix": "minimaxm3", "model": "MiniMaxAI/MiniMax-M3", "hw": "B200", "framework": "vllm",
		"precision": "fp4", "spec_decoding": "none", "isl": 0, "osl": 0, "tp": 4, "ep": 1, "conc": 8, "dp_attention": "false",
		"task": "minimax_m3_full", "em_strict": nil, "em_strict_se": nil, "em_flexible": nil, "em_flexible_se": nil, "n_eff": 0,
		"source":                 "eval_results/eval_minimaxm3_conc8/results_minimax_vendor_2026-11-02T11-00-00.000001.json",
		"infrastructure_success": false, "integration_error": map[string]any{"type": "TimeoutError", "message": "stock verifier exceeded 25200 s"},
		"score": nil, "score_name": nil, "score_se": nil,
	}}))

	sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
	require.Equal(t, schema.Counts{New: 3, Failed: 4}, sum.Rows.Eval)
	require.EqualValues(t, 3, sum.Details.EvalIntegrationErrors)
	got := map[string]string{}
	for _, f := range sum.Failures {
		require.Equal(t, schema.CategoryEval, f.Category)
		got[f.Artifact+" / "+f.File] = f.Reason
	}
	require.Equal(t, map[string]string{
		"eval_minimaxm3_conc8 / results_minimax_vendor_2026-11-02T11-00-00.000001.json":  "task minimax_m3_full: integration error (TimeoutError: stock verifier exceeded 25200 s): not a score",
		"eval_minimaxm3_conc16 / results_minimax_vendor_2026-11-02T12-00-00.000001.json": "task minimax_m3_smoke: no effective samples: not a score",
		"eval_kimik3_conc64 / results_kimi_vendor_2026-11-02T13-00-00.000001.json":       `result_format "inferencex-eval-v2" is not supported (this ingest reads inferencex-eval-v1)`,
		"eval_results_all / agg_eval_all.json":                                           "row 0: task minimax_m3_full: integration error (TimeoutError: stock verifier exceeded 25200 s): not a score",
	}, got)
	require.Zero(t, e.count(`SELECT count(*) FROM eval_results WHERE task LIKE 'minimax%'`), "no score of 0 for a harness that did not run")
	type row struct {
		task        string
		score, nEff float64
		scoreName   string
	}
	rows, err := e.pool().Query(t.Context(), `SELECT task, (metrics->>'score')::float8, (metrics->>'n_eff')::float8, metrics->>'score_name'
		FROM eval_results ORDER BY task`)
	require.NoError(t, err)
	var all []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.task, &r.score, &r.nEff, &r.scoreName))
		all = append(all, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []row{
		{"bfcl_simple_python", 1, 1, "accuracy"},
		{"bfcl_smoke", 0.75, 4, "accuracy"},
		{"kimi_tool_call_schema_full", 0.9901960784313726, 408, "em_strict"},
	}, all)
}
