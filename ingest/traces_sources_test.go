package ingest_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
)

// dynamoDisaggExport is server_metrics_export.json of a disaggregated
// Dynamo point as AIPerf writes it when it scrapes every worker: two
// prefill workers, one decode worker (each its own endpoint, its series
// labelled by Dynamo with its component and worker id, one series per TP
// rank) and the frontend (no component label).
const dynamoDisaggExport = `{"schema_version":"1.0","metrics":{
"sglang:prompt_tokens":{"type":"counter","series":[
 {"endpoint_url":"http://gb200-nv-1-prefill-0:8081/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"prefill","dynamo_endpoint":"generate","worker_id":"7587889123","tp_rank":"0"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"rate":100},{"start_ns":2000000000,"end_ns":3000000000,"rate":300}]},
 {"endpoint_url":"http://gb200-nv-1-prefill-1:8081/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"prefill","dynamo_endpoint":"generate","worker_id":"7587889456","tp_rank":"0"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"rate":200}]},
 {"endpoint_url":"http://gb200-nv-1-decode-0:8082/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"backend","dynamo_endpoint":"generate","worker_id":"7587889789","tp_rank":"0"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"rate":50}]}]},
"sglang:generation_tokens":{"type":"counter","series":[
 {"endpoint_url":"http://gb200-nv-1-decode-0:8082/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"backend","dynamo_endpoint":"generate","worker_id":"7587889789","tp_rank":"0"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"rate":400}]}]},
"sglang:token_usage":{"type":"gauge","series":[
 {"endpoint_url":"http://gb200-nv-1-decode-0:8082/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"backend","dynamo_endpoint":"generate","worker_id":"7587889789","tp_rank":"0"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"avg":0.5}]},
 {"endpoint_url":"http://gb200-nv-1-decode-0:8082/metrics","labels":{"dynamo_namespace":"dynamo","dynamo_component":"backend","dynamo_endpoint":"generate","worker_id":"7587889789","tp_rank":"1"},
  "timeslices":[{"start_ns":1000000000,"end_ns":2000000000,"avg":0.25}]}]},
"dynamo_frontend_requests":{"type":"counter","series":[
 {"endpoint_url":"http://gb200-nv-1:8000/metrics","labels":{"model":"qwen3.5"},
  "timeslices":[{"start_ns":0,"end_ns":1000000000,"rate":4}]}]}},
"warmup_metrics":{}}`

// A disaggregated Dynamo point's chart series carry one series per worker
// (metricSources), as the dashboard computes them at chart series version
// 20; an aggregated point's do not. A chart stored by a build that never
// filled them is recomputed by the next ingest, and a further rerun
// changes nothing.
func TestTraceMetricSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{
		{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1"},
		{Layout: generate.AgentXSingleNode, Conc: 4},
	})
	var exports []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "server_metrics_export.json" && strings.Contains(p, "_p1x8_d1x8_") {
			exports = append(exports, p)
		}
		return err
	}))
	require.Len(t, exports, 1)
	require.NoError(t, os.WriteFile(exports[0], []byte(dynamoDisaggExport), 0o644))

	e.mustIngest(dir, ingest.Config{})
	sources := func() string {
		var s string
		require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT t.chart_series->'metricSources'
			FROM benchmark_results b JOIN configs c ON c.id = b.config_id
			JOIN dashboard.agentic_trace_replay t ON t.id = b.trace_replay_id
			WHERE c.framework = 'dynamo-sglang' AND c.disagg`).Scan(&s))
		return s
	}
	// By the rules, by hand: the export starts at 0 (the frontend), so the
	// workers' points are at t = 1 and 2 s; roles order router, prefill,
	// decode, unknown (the frontend has no component label); a source is a
	// worker (named by its worker id); the two TP ranks of the decode
	// worker share one KV pool (their mean, no per-engine lines); without a
	// prompt breakdown or cache hits, a worker's prompt tokens are all
	// computed (missed) ones.
	want := `[
	 {"source":{"id":"dynamo|prefill|7587889123","adapter":"dynamo","role":"prefill",
	   "endpointUrl":"http://gb200-nv-1-prefill-0:8081/metrics","nativeRole":"prefill","workerId":"7587889123","dpRank":null,"engine":null},
	  "kvCacheUsage":[],"prefixCacheHitRate":[],"queueDepth":[],"promptTokensBySource":{"compute (miss)":[{"t":1,"value":100},{"t":2,"value":300}]},
	  "promptTps":[{"t":1,"value":100},{"t":2,"value":300}],"generationTps":[],"prefixCacheHitsTps":[],"hostKvCacheUsage":[],"kvCacheUsageByEngine":[]},
	 {"source":{"id":"dynamo|prefill|7587889456","adapter":"dynamo","role":"prefill",
	   "endpointUrl":"http://gb200-nv-1-prefill-1:8081/metrics","nativeRole":"prefill","workerId":"7587889456","dpRank":null,"engine":null},
	  "kvCacheUsage":[],"prefixCacheHitRate":[],"queueDepth":[],"promptTokensBySource":{"compute (miss)":[{"t":1,"value":200}]},
	  "promptTps":[{"t":1,"value":200}],"generationTps":[],"prefixCacheHitsTps":[],"hostKvCacheUsage":[],"kvCacheUsageByEngine":[]},
	 {"source":{"id":"dynamo|decode|7587889789","adapter":"dynamo","role":"decode",
	   "endpointUrl":"http://gb200-nv-1-decode-0:8082/metrics","nativeRole":"backend","workerId":"7587889789","dpRank":null,"engine":null},
	  "kvCacheUsage":[{"t":1,"value":0.375}],"prefixCacheHitRate":[],"queueDepth":[],"promptTokensBySource":{"compute (miss)":[{"t":1,"value":50}]},
	  "promptTps":[{"t":1,"value":50}],"generationTps":[{"t":1,"value":400}],"prefixCacheHitsTps":[],"hostKvCacheUsage":[],
	  "kvCacheUsageByEngine":[]},
	 {"source":{"id":"dynamo|unknown|http://gb200-nv-1:8000/metrics","adapter":"dynamo","role":"unknown",
	   "endpointUrl":"http://gb200-nv-1:8000/metrics","nativeRole":null,"workerId":null,"dpRank":null,"engine":null},
	  "kvCacheUsage":[],"prefixCacheHitRate":[],"queueDepth":[],"promptTokensBySource":{},
	  "promptTps":[],"generationTps":[],"prefixCacheHitsTps":[],"hostKvCacheUsage":[],"kvCacheUsageByEngine":[]}]`
	require.JSONEq(t, want, sources())
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE chart_series->'metricSources' = '[]'::jsonb`),
		"the aggregated point has none")
	fresh := payloadsOf(t, e)

	// What an earlier build left: the same chart without per-source series.
	_, err := e.pool().Exec(context.Background(), `UPDATE agentic_trace_replay
		SET chart_series = jsonb_set(chart_series, '{metricSources}', '[]') WHERE chart_series->'metricSources' <> '[]'::jsonb`)
	require.NoError(t, err)
	second := e.mustIngest(dir, ingest.Config{})
	require.True(t, hasNote(second, "1 stored trace(s) held derived payloads of an older build: recomputed"), "%v", second.Notes)
	require.Equal(t, fresh, payloadsOf(t, e))

	third := e.mustIngest(dir, ingest.Config{})
	require.False(t, hasNote(third, "held derived payloads of an older build"), "%v", third.Notes)
	require.JSONEq(t, want, sources())

	// A null chart (none stored, as for a disaggregated llm-d point) is
	// not a chart without per-source series: not stale.
	_, err = e.pool().Exec(context.Background(), `UPDATE agentic_trace_replay SET chart_series = NULL
		WHERE chart_series->'metricSources' <> '[]'::jsonb`)
	require.NoError(t, err)
	fourth := e.mustIngest(dir, ingest.Config{Reread: true})
	require.False(t, hasNote(fourth, "held derived payloads of an older build"), "%v", fourth.Notes)
}
