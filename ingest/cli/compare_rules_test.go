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
