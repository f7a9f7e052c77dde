package ingest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
)

// The run and attempt of the reference ledger's changelog backfill (an
// append-only delta sweep whose marker was lost before merge). The head
// ref is not its own: the embedded ledger carries that backfill, and
// these tests add theirs after the ingest.
const (
	backfillRun  = 32242794988
	backfillBase = "43996b8dc1b3fa53989abb0c86491a7d3e3b4472"
	backfillHead = "0000000000000000000000000000000000002676"
)

// backfillTree is a run with a point whose artifact lost its offload
// identity (conc 4: native host KV cache, reported off) and a point whose
// P75/P90 power was recomputed from its raw trace (conc 8), and a
// two-entry changelog without its append-only marker.
func backfillTree(t *testing.T, extra ...map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	perJob(t, dir, "qwen3.5_fp8_b200_conc4", benchRow(4, map[string]any{"kv_offloading": "none", "allocated_cpu_dram_gb": 0}))
	perJob(t, dir, "qwen3.5_fp8_b200_conc8", benchRow(8, map[string]any{"power_valid": 1, "power_metric_schema_version": 2,
		"avg_power_w": 530.522, "avg_total_gpu_power_w": 4244.176}))
	for i, row := range extra {
		perJob(t, dir, "extra_"+string(rune('a'+i)), row)
	}
	writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), `{
  "base_ref": "`+backfillBase+`",
  "head_ref": "`+backfillHead+`",
  "entries": [
    {"config-keys": ["qwen3.5-fp8-b200-sglang"], "description": ["Delta sweep of PR 2676"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/2676",
     "evals-only": false, "all-evals": false, "append-only": false},
    {"config-keys": ["qwen3.5-fp8-b200-sglang-mtp"], "description": ["Second entry"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/2676",
     "evals-only": false, "all-evals": false, "append-only": false}
  ]
}`)
	return dir
}

func backfillConfig() ingest.Config { return ingest.Config{Run: RunID(backfillRun, 3)} }

// pointSelector is the stored identity of the run's point at conc (config
// and point fields of a ledger entry).
func pointSelector(t *testing.T, e *env, conc int) map[string]any {
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
	'recipeFingerprint', b.recipe_fingerprint)::text
FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN workflow_runs w ON w.id = b.workflow_run_id
WHERE b.conc = $1 ORDER BY b.id LIMIT 1`, conc).Scan(&js))
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &m))
	return m
}

// backfillLedger is a ledger extension with the reference's three kinds
// of audited correction, shaped as its entries are: a native-offload
// correction (offload mode on, allocated_cpu_dram_gb removed, the backend
// merged), a measured-P90 power correction resting on the audited average
// power, and the append-only changelog restore.
func backfillLedger(t *testing.T, conc4, conc8 map[string]any) string {
	t.Helper()
	offload := map[string]any{"id": "run-32242794988-conc-4-native-offload",
		"reason": "The TensorRT-LLM runtime recipe configured a native host KV cache, but the artifact reported this point as non-offloaded.",
		"set": map[string]any{"offloadMode": "on", "metricsRemove": []string{"allocated_cpu_dram_gb"},
			"metricsMerge": map[string]any{"kv_offloading": "dram", "kv_offload_backend": "native", "kv_offload_backend_version": "1.3.0rc24"}}}
	power := map[string]any{"id": "run-32242794988-row-440673-measured-p90-power",
		"reason":          "Recompute P75 and P90 from the original validated raw power trace and exact benchmark window.",
		"expectedMetrics": map[string]any{"power_valid": 1, "power_metric_schema_version": 2, "avg_power_w": 530.522},
		"set": map[string]any{"metricsMerge": map[string]any{"p75_power_w": 529.736, "p75_total_gpu_power_w": 2118.944,
			"p90_power_w": 633.299, "p90_total_gpu_power_w": 2533.195}}}
	for k, v := range conc4 {
		offload[k] = v
	}
	for k, v := range conc8 {
		power[k] = v
	}
	ledger := map[string]any{
		"changelogBackfills": []any{map[string]any{"id": "run-32242794988-test-restore-append-only",
			"reason": "PR #2676 produced an append-only delta sweep, but conflict resolution removed the marker.",
			"runId":  backfillRun, "attempt": 3, "baseRef": backfillBase, "headRef": backfillHead,
			"set": map[string]any{"appendOnly": true}}},
		"benchmarkPointBackfills": []any{offload, power},
	}
	b, err := json.Marshal(ledger)
	require.NoError(t, err)
	return string(b)
}

// storedPoint is the stored offload mode and metrics of the run's point
// at conc, and what latest_benchmarks serves of it (after a refresh).
func storedPoint(t *testing.T, e *env, conc int) (offload string, metrics map[string]any, served map[string]any) {
	t.Helper()
	ctx := context.Background()
	var m, s string
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT offload_mode, metrics::text FROM benchmark_results WHERE conc = $1`, conc).Scan(&offload, &m))
	require.NoError(t, json.Unmarshal([]byte(m), &metrics))
	_, err := e.st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT json_build_object('offload_mode', offload_mode, 'metrics', metrics)::text
		FROM latest_benchmarks WHERE conc = $1`, conc).Scan(&s))
	require.NoError(t, json.Unmarshal([]byte(s), &served))
	return offload, metrics, served
}

// Point and changelog backfills added to the ledger after a run was
// ingested reach the stored data through `overrides apply`: the dry run
// reports what the apply does and changes nothing; the offload point is
// stored and served under its corrected identity with its metrics merged
// (unrelated measurements kept), the power point gains its P75/P90, every
// changelog entry and the run are append-only; a second apply rewrites
// nothing; a re-ingest stores the same corrected rows and no stale copy.
func TestOverridesApplyPointAndChangelogBackfills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	dir := backfillTree(t)
	e.mustIngest(dir, backfillConfig())
	offload, _, _ := storedPoint(t, e, 4)
	require.Equal(t, "off", offload)
	withLedger(t, e, backfillLedger(t, pointSelector(t, e, 4), pointSelector(t, e, 8)))
	plan := e.deps.Overrides.Plan(e.deps.Catalog.GPUPowerKeys())

	before := e.checksums(dataTables...)
	dry, id, err := e.st.ApplyOverrides(ctx, plan, true, "test")
	require.NoError(t, err)
	require.Zero(t, id)
	require.Equal(t, before, e.checksums(dataTables...), "a dry run changes nothing")

	res, id, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.NotZero(t, id)
	require.Equal(t, dry, res, "the dry run reported what the apply did")
	require.EqualValues(t, 2, res.PointBackfillRowsRewritten)
	require.EqualValues(t, 3, res.ChangelogRowsRewritten, "two entries and the run's append_only")
	require.Len(t, res.Actions, 3)
	require.Equal(t, "changelog_backfill", res.Actions[0].Kind)
	require.Equal(t, "point_backfill", res.Actions[1].Kind)
	require.Contains(t, res.Actions[1].Target, "run-32242794988-conc-4-native-offload: qwen3.5 fp8 b200 sglang single_turn 8192/1024 conc 4 offload off")

	offload, metrics, served := storedPoint(t, e, 4)
	require.Equal(t, "on", offload)
	require.Equal(t, "on", metrics["offload_mode"])
	require.Equal(t, "native", metrics["kv_offload_backend"])
	require.Equal(t, "1.3.0rc24", metrics["kv_offload_backend_version"])
	require.Equal(t, "dram", metrics["kv_offloading"])
	require.NotContains(t, metrics, "allocated_cpu_dram_gb")
	require.InDelta(t, 1004.5, metrics["tput_per_gpu"], 1e-9, "unrelated measurements stay")
	require.Equal(t, "on", served["offload_mode"], "latest_benchmarks serves the corrected identity")
	require.Equal(t, "native", served["metrics"].(map[string]any)["kv_offload_backend"])
	_, metrics, served = storedPoint(t, e, 8)
	require.InDelta(t, 633.299, metrics["p90_power_w"], 1e-9)
	require.InDelta(t, 530.522, metrics["avg_power_w"], 1e-9)
	require.InDelta(t, 2533.195, served["metrics"].(map[string]any)["p90_total_gpu_power_w"], 1e-9, "the dashboard shows the new values")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM changelog_entries WHERE append_only`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs WHERE append_only`))

	after := e.checksums(dataTables...)
	again, _, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.False(t, again.Changed(), "a second apply rewrites nothing")
	require.Equal(t, after, e.checksums(dataTables...))

	sum := e.mustIngest(dir, backfillConfig())
	require.EqualValues(t, 2, sum.Details.BackfilledPoints)
	require.EqualValues(t, 2, sum.Details.BackfilledChangelogEntries)
	require.Zero(t, sum.Details.OverrideRowsRewritten, "the stored data already holds the corrections")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM benchmark_results`), "no copy under the source identity")
	offload, metrics, _ = storedPoint(t, e, 4)
	require.Equal(t, "on", offload)
	require.NotContains(t, metrics, "allocated_cpu_dram_gb")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM changelog_entries WHERE append_only`))
}

// An ingest applies the ledger's backfills to the run it writes: with the
// ledger in place before the first ingest, the rows are stored corrected
// (counted, noted); added after it, the re-ingest corrects the stored
// points in its transaction first (counted as rewritten) so no stale copy
// remains; a third ingest rewrites nothing.
func TestIngestAppliesBackfillsToItsRun(t *testing.T) {
	t.Parallel()
	t.Run("ledger first", func(t *testing.T) {
		seed := newEnv(t)
		seed.mustIngest(backfillTree(t), backfillConfig())
		ledger := backfillLedger(t, pointSelector(t, seed, 4), pointSelector(t, seed, 8))

		e := newEnv(t)
		withLedger(t, e, ledger)
		sum := e.mustIngest(backfillTree(t), backfillConfig())
		require.EqualValues(t, 2, sum.Rows.Benchmark.New)
		require.EqualValues(t, 2, sum.Details.BackfilledPoints)
		require.EqualValues(t, 2, sum.Details.BackfilledChangelogEntries)
		require.Zero(t, sum.Details.OverrideRowsRewritten)
		require.True(t, hasNote(sum, "2 benchmark points corrected by the run overrides' point backfills"), "%v", sum.Notes)
		require.True(t, hasNote(sum, "changelog backfill run-32242794988-test-restore-append-only corrected 2 changelog entries"), "%v", sum.Notes)
		offload, metrics, _ := storedPoint(t, e, 4)
		require.Equal(t, "on", offload)
		require.Equal(t, "on", metrics["offload_mode"])
		_, metrics, _ = storedPoint(t, e, 8)
		require.InDelta(t, 2118.944, metrics["p75_total_gpu_power_w"], 1e-9)
		require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs WHERE append_only`))
	})
	t.Run("ledger after", func(t *testing.T) {
		e := newEnv(t)
		dir := backfillTree(t)
		e.mustIngest(dir, backfillConfig())
		withLedger(t, e, backfillLedger(t, pointSelector(t, e, 4), pointSelector(t, e, 8)))
		sum := e.mustIngest(dir, backfillConfig())
		require.EqualValues(t, 2, sum.Details.OverrideRowsRewritten, "the two stored points, corrected before the run's rows were written")
		require.EqualValues(t, 2, sum.Details.BackfilledPoints)
		require.True(t, hasNote(sum, "run overrides: run 32242794988 attempt 3 point backfill run-32242794988-conc-4-native-offload"), "%v", sum.Notes)
		require.Equal(t, 2, e.count(`SELECT count(*) FROM benchmark_results`), "no stale row under the source identity")
		require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE offload_mode = 'on'`))
		again := e.mustIngest(dir, backfillConfig())
		require.Zero(t, again.Details.OverrideRowsRewritten, "nothing left to correct")
		require.Equal(t, 2, e.count(`SELECT count(*) FROM benchmark_results`))
	})
}

// A correction that would make two points one is refused with a clear
// error and changes nothing: in stored data (the corrected identity is
// already stored), in an ingest (two artifact points become one), and a
// stored point whose audited measurement changed is refused, while an
// ingest stores such a point as read (counted as withheld).
func TestPointBackfillCollisionsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.mustIngest(backfillTree(t), backfillConfig())
	conc4, conc8 := pointSelector(t, e, 4), pointSelector(t, e, 8)
	withLedger(t, e, backfillLedger(t, conc4, conc8))
	plan := e.deps.Overrides.Plan(e.deps.Catalog.GPUPowerKeys())

	// A point already stored under the corrected identity.
	_, err := e.pool().Exec(ctx, `INSERT INTO benchmark_results (workflow_run_id, config_id, benchmark_type, date, isl, osl, conc,
		offload_mode, recipe_fingerprint, metrics, content_digest, source_artifact, source_file, source_row, ingest_id)
		SELECT workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, 'on', recipe_fingerprint, metrics, content_digest,
			source_artifact, source_file, source_row, ingest_id FROM benchmark_results WHERE conc = 4`)
	require.NoError(t, err)
	before := e.checksums(dataTables...)
	_, _, err = e.st.ApplyOverrides(ctx, plan, false, "test")
	require.ErrorContains(t, err, "point backfill run-32242794988-conc-4-native-offload: run 32242794988 attempt 3 stores the point under its source (offload off) and its corrected identity (offload on): the correction would collide with an existing point")
	require.Equal(t, before, e.checksums(dataTables...))
	require.Zero(t, e.count(`SELECT count(*) FROM override_applications`))

	// Two artifact points that the correction makes one.
	fresh := newEnv(t)
	withLedger(t, fresh, backfillLedger(t, conc4, conc8))
	_, err = fresh.ingest(backfillTree(t, benchRow(4, map[string]any{"kv_offloading": "dram"})), backfillConfig())
	require.ErrorContains(t, err, "benchmark point backfill run-32242794988-conc-4-native-offload: points")
	require.ErrorContains(t, err, "would both be stored as")
	require.Zero(t, fresh.count(`SELECT count(*) FROM benchmark_results`))

	// The audited measurement changed.
	moved := newEnv(t)
	moved.mustIngest(backfillTree(t), backfillConfig())
	_, err = moved.pool().Exec(ctx, `UPDATE benchmark_results SET metrics = metrics || '{"avg_power_w": 531}'::jsonb WHERE conc = 8`)
	require.NoError(t, err)
	withLedger(t, moved, backfillLedger(t, conc4, conc8))
	_, _, err = moved.st.ApplyOverrides(ctx, moved.deps.Overrides.Plan(nil), false, "test")
	require.ErrorContains(t, err, "point backfill run-32242794988-row-440673-measured-p90-power: the stored metrics differ from the audited measurement")

	withheld := newEnv(t)
	withLedger(t, withheld, backfillLedger(t, conc4, conc8))
	tree := backfillTree(t)
	perJob(t, tree, "qwen3.5_fp8_b200_conc8", benchRow(8, map[string]any{"power_valid": 0, "power_metric_schema_version": 2, "avg_power_w": 530.522}))
	sum := withheld.mustIngest(tree, backfillConfig())
	require.EqualValues(t, 1, sum.Details.PointBackfillsWithheld)
	require.EqualValues(t, 1, sum.Details.BackfilledPoints)
	_, metrics, _ := storedPoint(t, withheld, 8)
	require.NotContains(t, metrics, "p90_power_w")
}
