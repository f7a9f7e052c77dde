package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// csvStat is the named statistic of a metric's series in an AIPerf
// server_metrics_export.csv, summed over its rows (each section has its
// own header).
func csvStat(t *testing.T, csv, metric, stat string) float64 {
	t.Helper()
	var header []string
	total, found := 0.0, false
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		switch {
		case len(f) > 2 && f[0] == "Endpoint":
			header = f
		case len(f) > 2 && f[2] == metric:
			for i, h := range header {
				if h == stat {
					v, err := strconv.ParseFloat(f[i], 64)
					require.NoError(t, err)
					total, found = total+v, true
				}
			}
		}
	}
	require.True(t, found, "%s %s", metric, stat)
	return total
}

// TensorRT-LLM and ATOM AgentX points get the server metrics the ingest
// derives from their raw export and worker log, by the reference's rules
// for those engines, through a whole ingest: TensorRT-LLM's KV pool is the
// exported blocks × tokens per block, its GPU hit rate the cached share of
// the prompt tokens, its KV usage the utilisation gauge's maximum; ATOM's
// pool is the allocated-block gauge × the startup line's block size and
// DCP width, its GPU hit rate the cached share of the full prefix-cache
// tokens, its CPU and external rates the LMCache share; the token totals
// are the engines' counters. Underivable keys are absent, the producer's
// values stay as published_<key>, and a rerun derives nothing new.
func TestAgentXServerMetricsForTRTLLMAndATOM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 8, Framework: "trt"},
		{Layout: generate.AgentXSingleNode, Conc: 16, Framework: "atom"},
	})
	exports, _ := filepath.Glob(filepath.Join(dir, "agentic_*", "aiperf_artifacts", "server_metrics_export.csv"))
	require.Len(t, exports, 2)
	csvs := map[string]string{}
	for _, p := range exports {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if strings.Contains(string(b), "trtllm_") {
			csvs["trt"] = string(b)
		} else {
			csvs["atom"] = string(b)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "server_logs_*", "results", "server.log"))
	require.Len(t, logs, 2)

	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{New: 2}, sum.Rows.Benchmark)
	require.Equal(t, schema.Counts{New: 2}, sum.Rows.Trace, "%+v", sum.Failures)
	require.EqualValues(t, 2, sum.Details.ServerLogsNew)

	metrics := func(framework string) map[string]any {
		var js string
		require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT b.metrics::text FROM benchmark_results b
			JOIN configs c ON c.id = b.config_id WHERE c.framework = $1`, framework).Scan(&js))
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(js), &m))
		return m
	}

	trt, csv := metrics("trt"), csvs["trt"]
	require.InDelta(t, 62762*32, trt["kv_cache_pool_tokens"], 0, "blocks × tokens per block")
	require.InDelta(t, csvStat(t, csv, "trtllm_prompt_cached_tokens_total", "total")/csvStat(t, csv, "trtllm_prompt_tokens_total", "total"),
		trt["server_gpu_cache_hit_rate"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "trtllm_kv_cache_utilization", "max"), trt["gpu_kv_cache_usage_pct"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "trtllm_prompt_tokens_total", "total"), trt["total_prompt_tokens"], 0)
	require.InDelta(t, csvStat(t, csv, "trtllm_generation_tokens_total", "total"), trt["total_generation_tokens"], 0)
	for _, k := range []string{"server_cpu_cache_hit_rate", "server_external_cache_hit_rate", "kv_cache_pool_prefill_tokens", "kv_cache_pool_decode_tokens"} {
		require.NotContains(t, trt, k, "TensorRT-LLM exports no %s for an aggregated point", k)
	}

	atom, csv := metrics("atom"), csvs["atom"]
	require.InDelta(t, 8414*128*1, atom["kv_cache_pool_tokens"], 0, "allocated blocks × block_size × dcp")
	full := csvStat(t, csv, "atom:prefix_cache_full_tokens", "total")
	require.InDelta(t, csvStat(t, csv, "atom:prefix_cache_cached_tokens", "total")/full, atom["server_gpu_cache_hit_rate"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "atom:lmcache_loaded_tokens", "total")/full, atom["server_cpu_cache_hit_rate"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "atom:lmcache_loaded_tokens", "total")/full, atom["server_external_cache_hit_rate"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "atom:kv_cache_usage_ratio", "max"), atom["gpu_kv_cache_usage_pct"], 1e-9)
	require.InDelta(t, csvStat(t, csv, "atom:prompt_tokens_total", "total"), atom["total_prompt_tokens"], 0)
	require.InDelta(t, csvStat(t, csv, "atom:generation_tokens_total", "total"), atom["total_generation_tokens"], 0)

	for name, m := range map[string]map[string]any{"trt": trt, "atom": atom} {
		require.Contains(t, m, "published_kv_cache_pool_tokens", "%s: the producer's value stays traceable", name)
		require.NotEqual(t, m["published_kv_cache_pool_tokens"], m["kv_cache_pool_tokens"], name)
	}

	again := e.mustIngest(dir, ingest.Config{})
	require.Zero(t, again.Details.ServerMetricRowsUpdated)
	require.Equal(t, trt, metrics("trt"))
	require.Equal(t, atom, metrics("atom"))

	// Without its startup line, ATOM's pool is underivable and absent (the
	// block count alone is not a token count); the rest still derives from
	// the export. TensorRT-LLM's pool needs no log.
	for _, p := range logs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var kept []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "Concurrent capacity vs context length") && !strings.Contains(l, "paged KV cache") {
				kept = append(kept, l)
			}
		}
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644))
	}
	e = newEnv(t)
	e.mustIngest(dir, ingest.Config{})
	atom = metrics("atom")
	require.NotContains(t, atom, "kv_cache_pool_tokens")
	require.Contains(t, atom, "server_gpu_cache_hit_rate")
	require.InDelta(t, 62762*32, metrics("trt")["kv_cache_pool_tokens"], 0)
}
