package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// The real AgentX aggregate of h100-retry (attempt 1) with a raw sibling:
// what the traces stage writes back into the row, as stored. The real
// aggregate carries full-response ITL, so only the trace's cache hit rates
// replace its values; without it, the ITL reconstructed from the profile
// fills the gap.
func TestTraceGoldenH100Retry(t *testing.T) {
	t.Parallel()
	const rf = "dsv41flash_tp8_conc4_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc4_h100-dgxc_02_recipe-d19a8f4e8d14b747"
	aggregate, err := os.ReadFile("testdata/traces/h100-retry-attempt1.json")
	require.NoError(t, err)
	profile, err := os.ReadFile("testdata/traces/profile_export.jsonl")
	require.NoError(t, err)
	metrics, err := os.ReadFile("testdata/traces/server_metrics_export.json")
	require.NoError(t, err)
	var withoutFR map[string]any
	require.NoError(t, json.Unmarshal(aggregate, &withoutFR))
	lat := withoutFR["request_metrics"].(map[string]any)["latency"].(map[string]any)
	delete(lat, "full_response_itl")
	delete(lat, "full_response_intvty")

	out := map[string]any{}
	for _, c := range []struct {
		name string
		agg  string
	}{{"real aggregate", string(aggregate)}, {"aggregate without full-response ITL", mustJSON(t, withoutFR)}} {
		e := newEnv(t)
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "bmk_agentic_"+rf, rf+".json"), c.agg)
		writeFile(t, filepath.Join(dir, "agentic_"+rf, "aiperf_artifacts", "profile_export.jsonl"), string(profile))
		writeFile(t, filepath.Join(dir, "agentic_"+rf, "aiperf_artifacts", "server_metrics_export.json"), string(metrics))
		writeFile(t, filepath.Join(dir, "server_logs_"+rf, "results", "server.log"),
			"[2026-09-23 05:04:12 TP0] max_total_num_tokens=4382208, chunked_prefill_size=8192\n")
		sum := e.mustIngest(dir, ingest.Config{Run: schema.RunIdentity{SourceRunID: 34557177019, SourceRunAttempt: 1}})
		checkTraceInvariant(t, sum)
		require.Equal(t, schema.Counts{New: 1}, sum.Rows.Benchmark)
		require.Equal(t, schema.Counts{New: 1}, sum.Rows.Trace)
		var stored json.RawMessage
		require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT jsonb_build_object(
			'server_gpu_cache_hit_rate', metrics->'server_gpu_cache_hit_rate',
			'server_cpu_cache_hit_rate', metrics->'server_cpu_cache_hit_rate',
			'published_server_gpu_cache_hit_rate', metrics->'published_server_gpu_cache_hit_rate',
			'published_server_cpu_cache_hit_rate', metrics->'published_server_cpu_cache_hit_rate',
			'kv_cache_pool_tokens', metrics->'kv_cache_pool_tokens',
			'published_kv_cache_pool_tokens', metrics->'published_kv_cache_pool_tokens',
			'total_prompt_tokens', metrics->'total_prompt_tokens',
			'published_total_prompt_tokens', metrics->'published_total_prompt_tokens',
			'server_metrics_version', metrics->'server_metrics_version',
			'median_full_response_itl', metrics->'median_full_response_itl',
			'p90_full_response_intvty', metrics->'p90_full_response_intvty',
			'median_itl', metrics->'median_itl', 'median_intvty', metrics->'median_intvty',
			'derived_gpu_cache_hit_rate', metrics->'derived_gpu_cache_hit_rate',
			'derived_cpu_cache_hit_rate', metrics->'derived_cpu_cache_hit_rate',
			'derived_median_full_response_itl', metrics->'derived_median_full_response_itl',
			'derived_p90_full_response_intvty', metrics->'derived_p90_full_response_intvty',
			'tput_per_gpu', metrics->'tput_per_gpu')
			FROM benchmark_results WHERE trace_replay_id IS NOT NULL AND server_log_id IS NOT NULL`).Scan(&stored))
		out[c.name] = stored
		require.Equal(t, 1, e.count(`SELECT count(*) FROM run_datasets WHERE dataset_slug = 'cc-traces-weka-062126'`))
	}
	goldenJSON(t, "testdata/traces/h100_retry_metrics.golden.json", out)
}

func goldenJSON(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "rerun with -update")
	require.Equal(t, string(want), string(got), "%s differs; rerun with -update and review", path)
}
