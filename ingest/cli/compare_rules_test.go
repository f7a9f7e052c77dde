package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/compare"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestCompareRulesFire changes a reference database exactly as each rule
// explains — and once more just beside it — and checks which differences
// each change yields: the rule's, and unexplained ones for the near-miss.
// The tree holds two traces in the older run_0 layout (the demo's vllm
// one, and the conc4 sglang one moved there).
func TestCompareRulesFire(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(tree))
	// The conc4 sglang trace, one directory deeper as older AIPerf wrote it.
	raws, err := filepath.Glob(filepath.Join(tree, "agentic_qwen3.5_tp8_conc4_*"))
	require.NoError(t, err)
	require.Len(t, raws, 1)
	dir := filepath.Join(raws[0], "aiperf_artifacts")
	tmp := dir + ".old"
	require.NoError(t, os.Rename(dir, tmp))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "run_0")))
	db := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", tree, "--database-url", db, "--format", "json"))
	ref := referenceOf(t, db, refdb.Level017)
	code, out := runCompare(t, tree, ref)
	require.Equal(t, cli.ExitOK, code, "%+v", unexplained(out))

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer conn.Close(ctx)
	agentx := func(conc int) string {
		return `(SELECT b.id FROM benchmark_results b JOIN configs c ON c.id = b.config_id
			WHERE b.benchmark_type = 'agentic_traces' AND b.conc = ` + strconv.Itoa(conc) + `)`
	}
	for _, q := range []string{
		// older-aiperf-layout: the reference never linked the run_0 trace;
		// near-miss: a multinode trace unlinked.
		`UPDATE benchmark_results SET trace_replay_id = NULL WHERE id = ` + agentx(4),
		`UPDATE benchmark_results SET trace_replay_id = NULL WHERE id = ` + agentx(16),
		// recipe-fingerprint-not-a-metric, and a key beside it.
		`UPDATE benchmark_results SET metrics = metrics || '{"recipe_fingerprint": "341408ee19f26bfd"}'
			WHERE id = (SELECT min(id) FROM benchmark_results WHERE benchmark_type = 'single_turn')`,
		`UPDATE benchmark_results SET metrics = metrics || '{"recipe_fingerprint_v2": "341408ee19f26bfd"}'
			WHERE id = (SELECT max(id) FROM benchmark_results WHERE benchmark_type = 'single_turn')`,
		// evals-under-artifact-config: the first eval under another
		// configuration of its model; near-miss: the last under another task.
		`WITH c AS (INSERT INTO configs (id, hardware, framework, model, precision, spec_method, disagg, is_multinode,
				prefill_tp, prefill_ep, prefill_dp_attention, prefill_num_workers, decode_tp, decode_ep, decode_dp_attention,
				decode_num_workers, num_prefill_gpu, num_decode_gpu)
			SELECT (SELECT max(id) + 1 FROM configs), hardware, framework, model, precision, spec_method, disagg, is_multinode, prefill_tp, prefill_ep,
				prefill_dp_attention, prefill_num_workers, decode_tp, decode_ep, decode_dp_attention, 7, num_prefill_gpu,
				num_decode_gpu FROM configs WHERE id = (SELECT config_id FROM eval_results ORDER BY id LIMIT 1) RETURNING id)
			UPDATE eval_results SET config_id = (SELECT id FROM c) WHERE id = (SELECT min(id) FROM eval_results)`,
		`UPDATE eval_results SET task = task || '_other' WHERE id = (SELECT max(id) FROM eval_results)`,
	} {
		tag, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
		require.EqualValues(t, 1, tag.RowsAffected(), q)
	}
	code, out = runCompare(t, tree, ref)
	require.Equal(t, cli.ExitDifferences, code)
	type what struct{ table, kind, field, rule string }
	got := map[what]int{}
	for _, d := range out.Differences {
		got[what{d.Table, d.Kind, d.Field, d.Rule}]++
	}
	for _, w := range []what{
		{compare.TableTraces, compare.OnlyOurs, "", "older-aiperf-layout"},
		{compare.TableTraces, compare.OnlyOurs, "", compare.Unexplained},
		{compare.TableBenchmarks, compare.Different, "metrics.recipe_fingerprint", "recipe-fingerprint-not-a-metric"},
		{compare.TableBenchmarks, compare.Different, "metrics.recipe_fingerprint_v2", compare.Unexplained},
		{compare.TableEvals, compare.OnlyOurs, "", "evals-under-artifact-config"},
		{compare.TableEvals, compare.OnlyDB, "", "evals-under-artifact-config"},
		{compare.TableEvals, compare.OnlyOurs, "", compare.Unexplained},
		{compare.TableEvals, compare.OnlyDB, "", compare.Unexplained},
	} {
		require.Equal(t, 1, got[w], "%+v\n%+v", w, got)
	}
	require.Positive(t, got[what{compare.TableEvalSamples, compare.OnlyOurs, "", "evals-under-artifact-config"}], "%+v", got)
}

// TestCompareRulesOfTheFork changes a level-010 reference database the way
// the fork's own ingest writes the demo run — and once more just beside
// it — and checks which rule explains each change, and that the near-miss
// stays unexplained: GPUs counted as tp x ep, no multinode server log
// bundle, run stats of GPU keys only, a batched eval read from one results
// file without its samples, a KV-cache capacity read from the server log.
func TestCompareRulesOfTheFork(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	ref := referenceOf(t, db, refdb.Level010)
	code, out := runCompare(t, tree, ref)
	require.Equal(t, cli.ExitOK, code, "%+v", unexplained(out))

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer conn.Close(ctx)
	agentx := func(framework string, disagg bool, conc int) string {
		return `(SELECT b.id FROM benchmark_results b JOIN configs c ON c.id = b.config_id
			WHERE b.benchmark_type = 'agentic_traces' AND c.framework = '` + framework + `' AND c.disagg = ` +
			strconv.FormatBool(disagg) + ` AND b.conc = ` + strconv.Itoa(conc) + `)`
	}
	batched := `(SELECT e.id FROM eval_results e JOIN configs c ON c.id = e.config_id WHERE c.is_multinode AND e.conc = 4)`
	single := `(SELECT e.id FROM eval_results e JOIN configs c ON c.id = e.config_id WHERE NOT c.is_multinode)`
	for _, q := range []string{
		// reference-gpu-count: the single-node vllm config's GPUs as tp x ep
		// would give them with ep 8; near-miss: the disaggregated config's
		// ep changed too.
		`UPDATE configs SET num_prefill_gpu = 64, num_decode_gpu = 64 WHERE id = (SELECT config_id FROM benchmark_results WHERE id = ` + agentx("vllm", false, 8) + `)`,
		`UPDATE configs SET prefill_ep = 2, decode_ep = 2, num_prefill_gpu = 16, num_decode_gpu = 16 WHERE id = (SELECT config_id FROM benchmark_results WHERE id = ` + agentx("dynamo-sglang", true, 16) + `)`,
		// multinode-server-logs: the disaggregated AgentX row without its
		// bundle; near-miss: the single-node conc32 row without its log.
		`UPDATE benchmark_results SET server_log_id = NULL WHERE id = ` + agentx("dynamo-sglang", true, 16),
		`UPDATE benchmark_results SET server_log_id = NULL WHERE id = ` + agentx("sglang", false, 32),
		// run-stats-per-gpu: no row of a run-stats file keyed by cluster.
		`DELETE FROM run_stats WHERE hardware = 'b200'`,
		// batched-eval-files: the batched eval's conc4 row with another
		// score and without samples; near-miss: the single-node eval's score.
		`UPDATE eval_results SET metrics = metrics || '{"em_strict": 0.5}' WHERE id = ` + batched,
		`DELETE FROM eval_samples WHERE eval_result_id = ` + batched,
		`UPDATE eval_results SET metrics = metrics || '{"em_strict": 0.5}' WHERE id = ` + single,
		// agentx-server-metrics: a KV-cache capacity the reference read from
		// the server log; near-miss: a key we do not own.
		`UPDATE benchmark_results SET metrics = metrics || '{"kv_cache_pool_tokens": 123}' WHERE id = ` + agentx("sglang", false, 32),
		`UPDATE benchmark_results SET metrics = metrics || '{"kv_cache_pool_tokens_total": 123}' WHERE id = ` + agentx("sglang", false, 32),
	} {
		tag, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
		require.Positive(t, tag.RowsAffected(), q)
	}
	code, out = runCompare(t, tree, ref)
	require.Equal(t, cli.ExitDifferences, code)
	type what struct{ table, kind, field, rule string }
	got := map[what]int{}
	for _, d := range out.Differences {
		got[what{d.Table, d.Kind, d.Field, d.Rule}]++
	}
	for _, w := range []what{
		{compare.TableBenchmarks, compare.OnlyOurs, "", "reference-gpu-count"},
		{compare.TableBenchmarks, compare.OnlyDB, "", "reference-gpu-count"},
		{compare.TableBenchmarks, compare.OnlyOurs, "", compare.Unexplained},
		{compare.TableBenchmarks, compare.OnlyDB, "", compare.Unexplained},
		{compare.TableServerLogs, compare.OnlyOurs, "", "multinode-server-logs"},
		{compare.TableServerLogs, compare.OnlyOurs, "", compare.Unexplained},
		{compare.TableRunStats, compare.OnlyOurs, "", "run-stats-per-gpu"},
		{compare.TableEvals, compare.Different, "metrics.em_strict", "batched-eval-files"},
		{compare.TableEvals, compare.Different, "metrics.em_strict", compare.Unexplained},
		{compare.TableEvalSamples, compare.OnlyOurs, "", "batched-eval-files"},
		{compare.TableBenchmarks, compare.Different, "metrics.kv_cache_pool_tokens", "agentx-server-metrics"},
		{compare.TableBenchmarks, compare.Different, "metrics.kv_cache_pool_tokens_total", compare.Unexplained},
	} {
		require.Positive(t, got[w], "%+v\n%+v", w, got)
	}
}
