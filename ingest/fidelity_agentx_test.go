package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// agentxMetrics maps each stored AgentX row (by conc) to its metrics.
func agentxMetrics(t *testing.T, e *env) map[int]map[string]any {
	t.Helper()
	rows, err := e.pool().Query(context.Background(),
		`SELECT conc, metrics FROM benchmark_results WHERE benchmark_type = 'agentic_traces'`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[int]map[string]any{}
	for rows.Next() {
		var conc int
		var raw []byte
		require.NoError(t, rows.Scan(&conc, &raw))
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		out[conc] = m
	}
	require.NoError(t, rows.Err())
	return out
}

// requirePublishedKept checks that got holds every published metric with
// its published value — the server-metric keys the ingest owns under
// published_<key> — and adds only derived_* values, the owned keys it
// derived and the marker.
func requirePublishedKept(t *testing.T, bare, got map[string]any, conc int) {
	t.Helper()
	owned := map[string]bool{}
	for _, k := range trace.ServerMetricKeys {
		owned[k] = true
	}
	// The bare run derives the owned keys too (from the client totals):
	// its producer values are its published_* keys.
	published := map[string]any{}
	for k, v := range bare {
		switch {
		case k == trace.ServerMetricsMarker || owned[k]:
		case strings.HasPrefix(k, trace.PublishedPrefix):
			published[strings.TrimPrefix(k, trace.PublishedPrefix)] = v
		default:
			published[k] = v
		}
	}
	for k, v := range published {
		if owned[k] {
			require.Equal(t, v, got[trace.PublishedPrefix+k], "conc %d: %s as published, under published_", conc, k)
			continue
		}
		require.Equal(t, v, got[k], "conc %d: %s as published", conc, k)
	}
	for k := range got {
		if _, ok := published[k]; ok && !owned[k] {
			continue
		}
		require.True(t, strings.HasPrefix(k, schema.DerivedMetricPrefix) || owned[k] || k == trace.ServerMetricsMarker ||
			(strings.HasPrefix(k, trace.PublishedPrefix) && owned[strings.TrimPrefix(k, trace.PublishedPrefix)]),
			"conc %d: %s added to the published metrics", conc, k)
	}
	require.NotContains(t, got, "derived_gpu_cache_hit_rate", "conc %d: the rows serve server_gpu_cache_hit_rate", conc)
}

// The demo's AgentX rows keep every published metric: the server-metric
// keys the ingest owns (issue 25) are served as derived from the raw
// server_metrics_export.csv and the worker logs (conc 4 publishes
// server_gpu_cache_hit_rate 0.67837; its export's device hits over prompt
// tokens are 0.4265), the producer's values stay under published_<key>;
// every other published key is exactly as published; the values derived
// from the traces are stored next to them as derived_*.
func TestAgentXPublishedMetricsAreKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sum := e.mustIngest(demoTree(t), ingest.Config{})
	withTraces := agentxMetrics(t, e)
	require.Equal(t, 0.67837, withTraces[4]["published_server_gpu_cache_hit_rate"], "published, traceable")
	served, ok := withTraces[4]["server_gpu_cache_hit_rate"].(float64)
	require.True(t, ok, "server_gpu_cache_hit_rate served: %v", withTraces[4])
	require.InDelta(t, 0.4265, served, 0.0001, "device cached tokens / prompt tokens of the export")
	require.Equal(t, 4382208.0, withTraces[8]["kv_cache_pool_tokens"], "vLLM: the worker log's GPU KV cache size")
	require.Equal(t, 4078231.0, withTraces[8]["published_kv_cache_pool_tokens"])
	require.Equal(t, 2191104.0, withTraces[16]["kv_cache_pool_tokens"], "disaggregated: the decode pool")
	require.Equal(t, 2191104.0, withTraces[16]["kv_cache_pool_prefill_tokens"])
	require.Equal(t, 2191104.0, withTraces[16]["kv_cache_pool_decode_tokens"])
	require.EqualValues(t, 4, sum.Details.ServerMetricRows)
	require.EqualValues(t, len(sum.ServerMetricWarnings), sum.Details.ServerMetricDisagreements)
	linked := e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`)
	require.Equal(t, 3, linked)
	require.Equal(t, 4, e.count(`SELECT count(*) FROM benchmark_results WHERE metrics ? 'server_metrics_version'`),
		"the AgentX row without a raw sibling is derived too")

	bare := newEnv(t)
	dir := demoTree(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, en := range entries {
		if n := en.Name(); strings.HasPrefix(n, "agentic_") || strings.Contains(n, "server_logs") {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, n)))
		}
	}
	// conc 32 publishes a prompt-token total its client totals (510
	// requests x 102124.144 mean input tokens) disagree with.
	conc32 := filepath.Join(dir, "bmk_agentic_qwen3.5_tp8_conc32_kvnone_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc32_b200-nb_0_recipe-7122523243b3712a",
		"qwen3.5_tp8_conc32_kvnone_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc32_b200-nb_0_recipe-7122523243b3712a.json")
	body, err := os.ReadFile(conc32)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(body, []byte(`"prompt_total": 52331215`)))
	require.NoError(t, os.WriteFile(conc32, bytes.Replace(body, []byte(`"prompt_total": 52331215`), []byte(`"prompt_total": 1000`), 1), 0o644))
	first := bare.mustIngest(dir, ingest.Config{})
	published := agentxMetrics(t, bare)
	// Rows written now from their points alone derive without a read-back;
	// reread, the same rows are read back: the same rows derived, the same
	// warnings, and neither writes them again.
	reread := bare.mustIngest(dir, ingest.Config{Reread: true})
	require.EqualValues(t, 4, first.Details.ServerMetricRows)
	require.Equal(t, first.Details.ServerMetricRows, reread.Details.ServerMetricRows)
	require.Equal(t, first.ServerMetricWarnings, reread.ServerMetricWarnings)
	require.Len(t, first.ServerMetricWarnings, 1)
	require.Equal(t, "total_prompt_tokens", first.ServerMetricWarnings[0].Field)
	require.Equal(t, 1000.0, first.ServerMetricWarnings[0].Published)
	require.Equal(t, 52083313.0, first.ServerMetricWarnings[0].Derived, "510 x 102124.144, rounded to a token")
	require.Zero(t, first.Details.ServerMetricRowsUpdated)
	require.Zero(t, reread.Details.ServerMetricRowsUpdated)
	again := agentxMetrics(t, bare)
	require.Equal(t, published, again)
	withTraces[32][trace.PublishedPrefix+"total_prompt_tokens"] = 1000.0
	require.Len(t, published, len(withTraces))
	for conc, m := range withTraces {
		requirePublishedKept(t, published[conc], m, conc)
	}
}

// A published metric named derived_* fails its row: the prefix belongs to
// what the ingest derives.
func TestPublishedDerivedPrefixFailsTheRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "good4", benchRow(4, nil))
	perJob(t, dir, "reserved", benchRow(8, map[string]any{"derived_gpu_cache_hit_rate": 0.5}))
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(44, 1)})
	require.Equal(t, schema.Counts{New: 1, Failed: 1}, sum.Rows.Benchmark)
	require.Equal(t, []schema.Failure{{Category: schema.CategoryBenchmark, Artifact: "bmk_reserved", File: "agg_reserved.json",
		Reason: "row 0: derived_gpu_cache_hit_rate: the derived_ prefix is reserved for metrics the ingest derives from traces"}}, sum.Failures)
}

// qOlderApplyDerived is how binaries before migration 000008 wrote a
// sidecar's derived metrics into its rows: override over the published
// values, fill into rows without median_full_response_itl.
const qOlderApplyDerived = `
UPDATE benchmark_results b SET metrics = b.metrics
	|| coalesce(t.derived_metrics -> 'override', '{}'::jsonb)
	|| CASE WHEN b.metrics ? 'median_full_response_itl' THEN '{}'::jsonb
		ELSE coalesce(t.derived_metrics -> 'fill', '{}'::jsonb) END
FROM agentic_trace_replay t WHERE t.id = b.trace_replay_id`

// Migration 000008 repairs rows an older binary stored: the overwritten
// keys leave (the published values are not in the database), the derived
// values move to derived_*, the digests are cleared; the next ingest of
// the run restores the published values (counted as updated) and ends
// where a fresh ingest does. The down migration restores the older layout.
func TestMigrationDerivedMetricsRepairsOlderRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up, err := os.ReadFile("../migrations/000008_derived_metrics.up.sql")
	require.NoError(t, err)
	down, err := os.ReadFile("../migrations/000008_derived_metrics.down.sql")
	require.NoError(t, err)

	e := newEnv(t)
	dir := demoTree(t)
	e.mustIngest(dir, ingest.Config{})
	fresh := agentxMetrics(t, e)
	freshSums := e.checksums("agentic_trace_replay")

	// An older binary's database: the down migration's layout, with the
	// older apply run over it.
	_, err = e.pool().Exec(ctx, string(down))
	require.NoError(t, err)
	require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results WHERE metrics::text LIKE '%derived_%'`))
	require.Equal(t, 3, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE derived_metrics ? 'override'`))
	_, err = e.pool().Exec(ctx, qOlderApplyDerived)
	require.NoError(t, err)
	older := agentxMetrics(t, e)
	// The conc-4 sidecar's hit rate (from the JSON export); current rows
	// serve server_gpu_cache_hit_rate from the CSV instead (issue 25).
	var sidecarHit float64
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT (t.derived_metrics->'override'->>'server_gpu_cache_hit_rate')::float8
		FROM benchmark_results b JOIN agentic_trace_replay t ON t.id = b.trace_replay_id WHERE b.conc = 4`).Scan(&sidecarHit))
	require.NotEqual(t, 0.67837, older[4]["server_gpu_cache_hit_rate"], "the older binary overwrote the published value")
	require.Equal(t, sidecarHit, older[4]["server_gpu_cache_hit_rate"])

	_, err = e.pool().Exec(ctx, string(up))
	require.NoError(t, err)
	repaired := agentxMetrics(t, e)
	require.NotContains(t, repaired[4], "server_gpu_cache_hit_rate", "a derived value under a published name is removed, not kept")
	require.Equal(t, sidecarHit, repaired[4]["derived_gpu_cache_hit_rate"])
	require.Equal(t, freshSums, e.checksums("agentic_trace_replay"), "sidecars back in the current layout")
	require.Equal(t, 3, e.count(`SELECT count(*) FROM benchmark_results WHERE content_digest = '\x'::bytea`))

	sum := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 3, sum.Details.BenchmarkRowsUpdated, "the repaired rows are re-stored from the artifacts")
	require.Equal(t, fresh, agentxMetrics(t, e))
	require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results WHERE content_digest = '\x'::bytea`))
	again := e.mustIngest(dir, ingest.Config{})
	require.Zero(t, again.Details.BenchmarkRowsUpdated)
}
