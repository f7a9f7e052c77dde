package ingest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// legacyTPURun is the manual TPU sweep of 2026-08-03, published before
// num_gpus and dp were in the artifact contract.
const legacyTPURun = 30864013158

// tpuBenchRow is one benchmark row of that sweep as its aggregate holds it:
// no num_gpus, no dp, per-GPU throughputs divided by TP/2.
func tpuBenchRow(conc, tp int, tput, out, in float64) map[string]any {
	return map[string]any{
		"hw": "tpuv7", "conc": conc, "model": "Qwen/Qwen3.5-397B-A17B-FP8", "infmax_model_prefix": "qwen3.5",
		"framework": "vllm", "precision": "fp8", "spec_decoding": "none", "disagg": false, "isl": 8192, "osl": 1024,
		"is_multinode": false, "tp": tp, "ep": 1, "dp_attention": "false",
		"tput_per_gpu": tput, "output_tput_per_gpu": out, "input_tput_per_gpu": in,
		"median_ttft": 0.32, "median_intvty": 63.49,
	}
}

// tpuEvalRow is one eval row of the same sweep in agg_eval_all.json: the
// eval aggregator spells the hardware TPUV7 and mirrors the engine into
// one worker per role.
func tpuEvalRow(conc, tp int, em float64) map[string]any {
	return map[string]any{
		"is_multinode": false, "model_prefix": "qwen3.5", "model": "Qwen/Qwen3.5-397B-A17B-FP8", "hw": "TPUV7",
		"framework": "vllm", "precision": "fp8", "spec_decoding": "none", "isl": 8192, "osl": 1024,
		"tp": tp, "ep": 1, "prefill_tp": tp, "prefill_ep": 1, "prefill_num_workers": 1,
		"decode_tp": tp, "decode_ep": 1, "decode_num_workers": 1, "conc": conc,
		"dp_attention": "false", "prefill_dp_attention": "false", "decode_dp_attention": "false",
		"task": "gsm8k", "em_strict": em, "em_strict_se": 0.0044, "em_flexible": em - 0.006, "em_flexible_se": 0.0049,
		"n_eff": 1319, "source": "eval_qwen3.5_8k1k/results.json", "score": em, "score_name": "em_strict", "score_se": 0.0044,
	}
}

// The legacy TPU repair runs for the eval rows of the sweep too, whatever
// the case of their hw: evals and benchmarks of one deployment resolve to
// one config of 4 chips, and both keep dp (8 for TP1, 1 for TP8), as the
// reference's benchmark and eval mappers do. Another run is left alone.
func TestLegacyTPUSweepEvalsShareTheRepairedConfigs(t *testing.T) {
	t.Parallel()
	build := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), mustJSON(t, []any{
			tpuBenchRow(16, 8, 2180.1187026656025, 241.57109885937615, 1938.5476038062263),
			tpuBenchRow(64, 1, 29398.734613014203, 3261.5330321597676, 26137.201580854435),
			tpuBenchRow(64, 8, 3705.8131472623354, 411.1276267468178, 3294.6855205155175),
		}))
		writeFile(t, filepath.Join(dir, "eval_results_all", "agg_eval_all.json"), mustJSON(t, []any{
			tpuEvalRow(64, 8, 0.9734647460197119), tpuEvalRow(64, 1, 0.9704321455648218), tpuEvalRow(32, 8, 0.9681576952236542),
		}))
		return dir
	}
	ctx := context.Background()
	t.Run("the legacy run", func(t *testing.T) {
		e := newEnv(t)
		sum := e.mustIngest(build(t), ingest.Config{Run: RunID(legacyTPURun, 1)})
		require.Equal(t, schema.StatusSucceeded, sum.Status, "%+v", sum.Failures)
		require.Equal(t, schema.Counts{New: 3}, sum.Rows.Benchmark)
		require.Equal(t, schema.Counts{New: 3}, sum.Rows.Eval)
		require.Equal(t, 2, e.count(`SELECT count(*) FROM configs`), "one config per TP, shared by benchmarks and evals")
		require.Equal(t, 0, e.count(`SELECT count(*) FROM configs WHERE num_prefill_gpu <> 4 OR num_decode_gpu <> 4
			OR disagg OR prefill_num_workers <> 0 OR decode_num_workers <> 0 OR hardware <> 'tpuv7'`))
		require.Equal(t, 0, e.count(`SELECT count(*) FROM eval_results ev WHERE NOT EXISTS (
			SELECT 1 FROM benchmark_results b WHERE b.config_id = ev.config_id)`), "every eval shares its benchmark's config")
		rows, err := e.pool().Query(ctx, `SELECT c.decode_tp, ev.conc, (ev.metrics->>'dp')::int, (ev.metrics->>'em_strict')::float8
			FROM eval_results ev JOIN configs c ON c.id = ev.config_id ORDER BY c.decode_tp, ev.conc`)
		require.NoError(t, err)
		type evalDP struct {
			tp, conc, dp int
			em           float64
		}
		var got []evalDP
		for rows.Next() {
			var r evalDP
			require.NoError(t, rows.Scan(&r.tp, &r.conc, &r.dp, &r.em))
			got = append(got, r)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []evalDP{{1, 64, 8, 0.9704321455648218}, {8, 32, 1, 0.9681576952236542}, {8, 64, 1, 0.9734647460197119}}, got)
		var dp int
		var tput float64
		require.NoError(t, e.pool().QueryRow(ctx, `SELECT (b.metrics->>'dp')::int, (b.metrics->>'tput_per_gpu')::float8
			FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE c.decode_tp = 1`).Scan(&dp, &tput))
		require.Equal(t, 8, dp)
		require.InDelta(t, 3674.8418266267754, tput, 1e-9, "TP1/DP8 throughput per chip")
	})
	t.Run("another run", func(t *testing.T) {
		e := newEnv(t)
		e.mustIngest(build(t), ingest.Config{Run: RunID(legacyTPURun+1, 1)})
		require.Equal(t, 0, e.count(`SELECT count(*) FROM configs WHERE num_decode_gpu = 4`))
		require.Equal(t, 0, e.count(`SELECT count(*) FROM eval_results WHERE metrics ? 'dp'`))
	})
}
