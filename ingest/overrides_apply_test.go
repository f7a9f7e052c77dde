package ingest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/schema"
)

const demoRun = 28485856738

// demoPoint reads the config and point identity of the demo row at conc
// and benchmark type, for a purge entry.
func demoPoint(t *testing.T, e *env, benchmarkType string, conc int) string {
	t.Helper()
	var js string
	require.NoError(t, e.pool().QueryRow(context.Background(), `
SELECT json_build_object('runId', w.github_run_id, 'attempt', w.run_attempt,
	'config', json_build_object('hardware', c.hardware, 'framework', c.framework, 'model', c.model, 'precision', c.precision,
		'spec_method', c.spec_method, 'disagg', c.disagg, 'is_multinode', c.is_multinode,
		'prefill_tp', c.prefill_tp, 'prefill_ep', c.prefill_ep, 'prefill_dp_attention', c.prefill_dp_attention,
		'prefill_num_workers', c.prefill_num_workers, 'decode_tp', c.decode_tp, 'decode_ep', c.decode_ep,
		'decode_dp_attention', c.decode_dp_attention, 'decode_num_workers', c.decode_num_workers,
		'num_prefill_gpu', c.num_prefill_gpu, 'num_decode_gpu', c.num_decode_gpu),
	'benchmarkType', b.benchmark_type, 'isl', b.isl, 'osl', b.osl, 'conc', b.conc, 'offloadMode', b.offload_mode,
	'recipeFingerprint', b.recipe_fingerprint, 'reason', 'bad point')::text
FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN workflow_runs w ON w.id = b.workflow_run_id
WHERE b.benchmark_type = $1 AND b.conc = $2`, benchmarkType, conc).Scan(&js))
	return js
}

// withLedger swaps the environment's run overrides for the embedded ledger
// plus ext.
func withLedger(t *testing.T, e *env, ext string) {
	t.Helper()
	ov, err := overrides.Load(overrides.Extension{Data: []byte(ext)})
	require.NoError(t, err)
	e.deps.Overrides = ov
}

// latestConcs are the concurrencies latest_benchmarks serves, after a
// refresh.
func latestConcs(t *testing.T, e *env) []string {
	t.Helper()
	_, err := e.st.RefreshLatestBenchmarks(context.Background(), false)
	require.NoError(t, err)
	rows, err := e.pool().Query(context.Background(), `SELECT benchmark_type || ' ' || conc FROM latest_benchmarks ORDER BY conc, benchmark_type`)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		out = append(out, c)
	}
	require.NoError(t, rows.Err())
	return out
}

// A purge added to the ledger after the run was ingested reaches the
// stored data: `overrides apply` deletes the point's row with the server
// log, trace sidecar and telemetry series only it used and its
// availability; a dry run reports the same and changes nothing; a second
// apply changes nothing and says so; latest_benchmarks no longer serves
// the point.
func TestOverridesApplyPurgesStoredPoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.mustIngest(demoTree(t), ingest.Config{})
	served := latestConcs(t, e)
	require.Contains(t, served, "agentic_traces 8")
	require.Contains(t, served, "single_turn 32")
	agentx := demoPoint(t, e, "agentic_traces", 8) // vLLM: its own server log, sidecar and config
	single := demoPoint(t, e, "single_turn", 32)   // its own telemetry series
	withLedger(t, e, fmt.Sprintf(`{"purgedPoints":[%s,%s],"conclusionOverrides":[{"runId":%d,"conclusion":"failure","reason":"the sweep gate failed after upload"}]}`,
		agentx, single, demoRun))
	plan := e.deps.Overrides.Plan(e.deps.Catalog.GPUPowerKeys())

	count := func(q string) int { return e.count(q) }
	before := e.checksums(dataTables...)
	rows, logs, sidecars, series := count(`SELECT count(*) FROM benchmark_results`), count(`SELECT count(*) FROM server_logs`),
		count(`SELECT count(*) FROM agentic_trace_replay`), count(`SELECT count(*) FROM gpu_metric_series`)

	dry, id, err := e.st.ApplyOverrides(ctx, plan, true, "test")
	require.NoError(t, err)
	require.Zero(t, id, "a dry run records nothing")
	require.Equal(t, before, e.checksums(dataTables...), "a dry run changes nothing")

	res, id, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.NotZero(t, id)
	require.Equal(t, dry, res, "the dry run reported what the apply did")
	require.EqualValues(t, 2, res.BenchmarkRowsDeleted)
	require.EqualValues(t, 1, res.ServerLogsDeleted)
	require.EqualValues(t, 1, res.TraceSidecarsDeleted)
	require.EqualValues(t, 1, res.GPUMetricSeriesDeleted)
	require.EqualValues(t, 1, res.AvailabilityDeleted, "the vLLM AgentX entry; sglang conc 32 shares its availability with the other points")
	require.EqualValues(t, 1, res.ConclusionsUpdated)
	require.Len(t, res.Actions, 3)
	require.Equal(t, rows-2, count(`SELECT count(*) FROM benchmark_results`))
	require.Equal(t, logs-1, count(`SELECT count(*) FROM server_logs`))
	require.Equal(t, sidecars-1, count(`SELECT count(*) FROM agentic_trace_replay`))
	require.Equal(t, series-1, count(`SELECT count(*) FROM gpu_metric_series`))
	require.Zero(t, count(`SELECT count(*) FROM availability WHERE framework = 'vllm'`))
	require.Equal(t, 1, count(`SELECT count(*) FROM workflow_runs WHERE conclusion = 'failure'`))
	require.Zero(t, count(`SELECT count(*) FROM server_log_files f WHERE NOT EXISTS (SELECT 1 FROM server_logs l WHERE l.id = f.server_log_id)`))
	served = latestConcs(t, e)
	require.NotContains(t, served, "single_turn 32", "latest_benchmarks reflects the deletion")
	require.NotContains(t, served, "agentic_traces 8")
	require.Contains(t, served, "agentic_traces 32")
	require.Equal(t, 1, count(`SELECT count(*) FROM override_applications WHERE changed`))

	after := e.checksums(dataTables...)
	again, id2, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.False(t, again.Changed(), "a second apply changes nothing")
	require.Empty(t, again.Actions)
	require.Greater(t, id2, id, "and its ledger entry says so")
	require.Equal(t, 1, count(`SELECT count(*) FROM override_applications WHERE NOT changed`))
	require.Equal(t, after, e.checksums(dataTables...))

	// A re-ingest of the run keeps the purged points out.
	sum := e.mustIngest(demoTree(t), ingest.Config{})
	require.EqualValues(t, 3, sum.Stats.PurgedPoints, "both per-job rows and conc 32's copy in the aggregate")
	require.Zero(t, sum.Details.OverrideRowsDeleted, "nothing of them was stored again")
	require.Equal(t, rows-2, count(`SELECT count(*) FROM benchmark_results`))
}

// An ingest applies the current ledger to the run it writes: a point
// purged since its last ingest is deleted from the stored data in the
// run's transaction (counted and noted); a purged attempt is deleted
// whole, its workflow run with its run stats, evals, changelog and
// telemetry, while the ledger keeps its ingests.
func TestIngestAppliesTheLedgerToItsRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	e.mustIngest(dir, ingest.Config{})
	rows := e.count(`SELECT count(*) FROM benchmark_results`)
	withLedger(t, e, fmt.Sprintf(`{"purgedPoints":[%s]}`, demoPoint(t, e, "agentic_traces", 8)))
	sum := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 1, sum.Stats.PurgedPoints)
	require.EqualValues(t, 4, sum.Details.OverrideRowsDeleted, "the row, its server log, its sidecar and its availability")
	require.True(t, hasNote(sum, "run overrides: run 28485856738 attempt 2 point qwen3.5 fp8 b200 vllm agentic_traces"), "%v", sum.Notes)
	require.Equal(t, rows-1, e.count(`SELECT count(*) FROM benchmark_results`))

	withLedger(t, e, fmt.Sprintf(`{"purgedRunAttempts":[{"runId":%d,"attempts":[2],"reason":"accidental merge"}]}`, demoRun))
	sum = e.mustIngest(dir, ingest.Config{})
	require.True(t, sum.Details.PurgedRun)
	require.Greater(t, sum.Details.OverrideRowsDeleted, int64(rows))
	require.True(t, hasNote(sum, "run overrides: run 28485856738 attempt 2 (attempts 2) purged (accidental merge)"), "%v", sum.Notes)
	for _, tbl := range []string{"workflow_runs", "benchmark_results", "run_stats", "eval_results", "eval_samples", "changelog_entries",
		"agentic_trace_replay", "server_logs", "gpu_metric_series", "benchmark_result_gpu_metrics", "availability", "run_datasets"} {
		require.Zero(t, e.count(`SELECT count(*) FROM `+tbl), tbl)
	}
	require.Equal(t, 2, e.count(`SELECT count(*) FROM ingests WHERE workflow_run_id IS NULL AND github_run_id = $1 AND status <> 'purged'`, int64(demoRun)),
		"the ledger keeps the run's ingests")
	require.Equal(t, schema.StatusPurged, sum.Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM ingests WHERE status = 'purged' AND id = $1`, sum.IngestID), "and records the purged one")
	again := e.mustIngest(dir, ingest.Config{})
	require.Zero(t, again.Details.OverrideRowsDeleted, "nothing left to delete")
}

// The legacy amd-smi retirement reaches rows stored before the policy:
// apply removes their GPU watts and joules, keeps everything else, and a
// second apply finds nothing.
func TestOverridesApplyRetiresStoredGPUPower(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "qwen3.5_fp4_mi355x_conc4", retiredRow(nil))
	cfg := ingest.Config{Run: RunID(36507377618, 1), Meta: schema.RunMeta{HeadSHA: "b9489aead453ae3765bf5882db84031326bf1ff7"}}
	e.mustIngest(dir, cfg)
	// What an ingest before the policy stored.
	_, err := e.pool().Exec(ctx, `UPDATE benchmark_results SET metrics = metrics || '{"avg_power_w": 535, "total_gpu_energy_j": 9100000}'::jsonb,
		workers = '[{"role": "agg", "worker_idx": 0, "num_gpus": 4, "avg_power_w": 535, "avg_temp_c": 72}]'::jsonb`)
	require.NoError(t, err)
	plan := e.deps.Overrides.Plan(e.deps.Catalog.GPUPowerKeys())
	res, _, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.EqualValues(t, 1, res.GPUPowerRowsRewritten)
	require.Equal(t, "retired_gpu_power", res.Actions[0].Kind)
	var metrics, workers string
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT metrics::text, workers::text FROM benchmark_results`).Scan(&metrics, &workers))
	require.NotContains(t, metrics, "avg_power_w")
	require.NotContains(t, metrics, "total_gpu_energy_j")
	require.Contains(t, metrics, `"avg_cpu_socket_power_w": 250`)
	require.JSONEq(t, `[{"role": "agg", "worker_idx": 0, "num_gpus": 4, "avg_temp_c": 72}]`, workers)
	again, _, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.False(t, again.Changed())
}
