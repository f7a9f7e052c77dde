package trace

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The rules of chart series versions 13 to 20 (InferenceX-app
// compute-chart-series.ts and server-metrics-adapters.ts at 08a6bf7), each
// on a small export whose expected series follow from the rule by hand.

// slices writes timeslices at the given starts (seconds), each one second
// long, with one field set to the given values.
func slicesAt(field string, starts []float64, vals ...float64) string {
	var parts []string
	for i, st := range starts {
		ns := int64(st * 1e9)
		parts = append(parts, fmt.Sprintf(`{"start_ns":%d,"end_ns":%d,%q:%g}`, ns, ns+1e9, field, vals[i]))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func engineLabels(t *testing.T, c map[string]json.RawMessage) []string {
	t.Helper()
	var es []EngineSeries
	require.NoError(t, json.Unmarshal(c["kvCacheUsageByEngine"], &es))
	var out []string
	for _, e := range es {
		out = append(out, e.EngineLabel)
	}
	return out
}

func TestChartSeriesEngines(t *testing.T) {
	t0 := []float64{0, 1, 2}
	t.Run("a mirror endpoint is dropped, a disagreeing one is another engine", func(t *testing.T) {
		// Engine 0 on two endpoints whose means differ by 0.01 (a mirror):
		// the one covering the longer span stays. Engine 1's endpoints
		// disagree (0.25 against 0.75): two engines, told apart by host.
		c := chartOf(t, 0, `{"metrics":{"vllm:kv_cache_usage_perc":{"series":[
			{"endpoint_url":"http://a:1/metrics","labels":{"engine":"0"},"timeslices":`+slicesAt("avg", t0, 0.5, 0.5, 0.5)+`},
			{"endpoint_url":"http://b:1/metrics","labels":{"engine":"0"},"timeslices":`+slicesAt("avg", t0[:2], 0.51, 0.51)+`},
			{"endpoint_url":"http://b:1/metrics","labels":{"engine":"1"},"timeslices":`+slicesAt("avg", t0, 0.75, 0.75, 0.75)+`},
			{"endpoint_url":"http://a:1/metrics","labels":{"engine":"1"},"timeslices":`+slicesAt("avg", t0, 0.25, 0.25, 0.25)+`}]}}}`)
		require.Equal(t, []string{"0", "1 (a:1)", "1 (b:1)"}, engineLabels(t, c))
		require.JSONEq(t, `[{"t":0,"value":0.5},{"t":1,"value":0.5},{"t":2,"value":0.5}]`, string(c["kvCacheUsage"]))
	})
	t.Run("shard ranks share one pool", func(t *testing.T) {
		c := chartOf(t, 0, `{"metrics":{"vllm:kv_cache_usage_perc":{"series":[
			{"labels":{"engine":"0","tp_rank":"0"},"timeslices":`+slicesAt("avg", t0[:1], 0.4)+`},
			{"labels":{"engine":"0","tp_rank":"1"},"timeslices":`+slicesAt("avg", t0[:1], 0.6)+`}]}}}`)
		require.JSONEq(t, `[{"t":0,"value":0.5}]`, string(c["kvCacheUsage"]))
		require.JSONEq(t, `[]`, string(c["kvCacheUsageByEngine"]))
	})
	t.Run("roles are named when there are two", func(t *testing.T) {
		c := chartOf(t, 0, `{"metrics":{"vllm:kv_cache_usage_perc":{"series":[
			{"labels":{"engine":"0","dynamo_component":"backend","worker_id":"w-decode"},"timeslices":`+slicesAt("avg", t0[:1], 0.2)+`},
			{"labels":{"engine":"0","engine_type":"unified","dynamo_component":"prefill","worker_id":"w-prefill"},"timeslices":`+slicesAt("avg", t0[:1], 0.4)+`}]}}}`)
		require.Equal(t, []string{"prefill 0", "decode 0"}, engineLabels(t, c))
	})
}

func TestChartSeriesGrid(t *testing.T) {
	t.Run("components sum on one grid, each holding its last sample", func(t *testing.T) {
		// Engine 1 is scraped a quarter second after engine 0: the sum is
		// taken once per second (the cadence of the longest series), not
		// once per component's instant.
		c := chartOf(t, 0, `{"metrics":{"vllm:prompt_tokens":{"series":[
			{"labels":{"engine":"0"},"timeslices":`+slicesAt("rate", []float64{0, 1, 2}, 100, 100, 100)+`},
			{"labels":{"engine":"1"},"timeslices":`+slicesAt("rate", []float64{0.25, 1.25, 2.25}, 50, 50, 50)+`}]}}}`)
		require.JSONEq(t, `[{"t":0,"value":100},{"t":1,"value":150},{"t":2,"value":150}]`, string(c["prefillTps"]))
	})
	t.Run("a reporting hole longer than five scrapes is not carried", func(t *testing.T) {
		// Samples at 0..3 and 10: the median gap is 1 s, so the sample at 3
		// stands until 8; 9 has no value.
		c := chartOf(t, 0, `{"metrics":{"vllm:generation_tokens":{"series":[
			{"timeslices":`+slicesAt("rate", []float64{0, 1, 2, 3, 10}, 1, 2, 3, 4, 5)+`}]}}}`)
		var ps []Point
		require.NoError(t, json.Unmarshal(c["decodeTps"], &ps))
		var ts []float64
		for _, p := range ps {
			ts = append(ts, p.T)
		}
		require.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 10}, ts)
		require.Equal(t, Point{8, 4}, ps[8])
	})
}

func TestChartSeriesEngineFamilies(t *testing.T) {
	trt := PointContext{Framework: "dynamo-trt"}
	t.Run("TensorRT-LLM: prompt rate from prefill batches and cached tokens", func(t *testing.T) {
		c := chartFor(t, 0, `{"metrics":{
			"trtllm_prefill_batch_tokens":{"series":[{"timeslices":[{"start_ns":0,"end_ns":2000000000,"sum":600}]}]},
			"trtllm_prompt_cached_tokens":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1000000000,"rate":100}]}]},
			"trtllm_kv_cache_utilization":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1000000000,"avg":0.3}]}]}}}`, trt)
		// 600 tokens over 2 s is 300/s, plus 100/s cached.
		require.JSONEq(t, `[{"t":0,"value":400}]`, string(c["prefillTps"]))
		require.JSONEq(t, `{"cache hit (HBM)":[{"t":0,"value":100}],"compute (miss)":[{"t":0,"value":300}]}`, string(c["promptTokensBySource"]))
		// No query counter: the hit rate is cached over prompt tokens.
		require.JSONEq(t, `[{"t":0,"value":0.25}]`, string(c["prefixCacheHitRate"]))
		require.JSONEq(t, `[{"t":0,"value":0.3}]`, string(c["kvCacheUsage"]))
	})
	t.Run("TensorRT-LLM: Dynamo's per-rank gauge replaces the native one on its endpoint", func(t *testing.T) {
		doc := `{"metrics":{
			"dynamo_component_gpu_cache_usage_percent":{"series":[
				{"endpoint_url":"http://p:1/metrics","labels":{"dp_rank":"0"},"timeslices":[{"start_ns":0,"avg":0.25}]},
				{"endpoint_url":"http://p:1/metrics","labels":{"dp_rank":"1"},"timeslices":[{"start_ns":0,"avg":0.5}]}]},
			"trtllm_kv_cache_utilization":{"series":[
				{"endpoint_url":"http://p:1/metrics","timeslices":[{"start_ns":0,"avg":0.9}]},
				{"endpoint_url":"http://d:2/metrics","timeslices":[{"start_ns":0,"avg":0.75}]}]}}}`
		c := chartFor(t, 0, doc, trt)
		require.JSONEq(t, `[{"t":0,"value":0.5}]`, string(c["kvCacheUsage"]), "(0.25 + 0.5 + 0.75) / 3")
		require.Len(t, engineLabels(t, c), 3)
		// Under another adapter Dynamo's gauge is not read.
		c = chartFor(t, 0, doc, PointContext{Framework: "vllm"})
		require.JSONEq(t, `[{"t":0,"value":0.825}]`, string(c["kvCacheUsage"]), "(0.9 + 0.75) / 2")
	})
	t.Run("TensorRT-LLM sources: one per role and endpoint, roles lent by the endpoint", func(t *testing.T) {
		c := chartFor(t, 0, `{"metrics":{
			"trtllm_num_requests_running":{"series":[
				{"endpoint_url":"http://p:1/metrics","labels":{"disaggregation_mode":"prefill"},"timeslices":[{"start_ns":0,"avg":2}]},
				{"endpoint_url":"http://d:2/metrics","labels":{"dynamo_component":"backend"},"timeslices":[{"start_ns":0,"avg":3}]}]},
			"dynamo_component_gpu_cache_usage_percent":{"series":[
				{"endpoint_url":"http://p:1/metrics","labels":{"dp_rank":"0"},"timeslices":[{"start_ns":0,"avg":0.5}]}]}}}`,
			PointContext{Framework: "dynamo-trt", Disagg: true})
		srcs := sourcesOf(t, c)
		require.Len(t, srcs, 2)
		require.Equal(t, "trtllm|prefill|http://p:1/metrics", srcs[0].Source.ID)
		require.Equal(t, []Point{{0, 0.5}}, srcs[0].KVCacheUsage, "the unlabelled gauge belongs to the prefill endpoint")
		require.Equal(t, "trtllm|decode|http://d:2/metrics", srcs[1].Source.ID)
		require.Equal(t, "backend", *srcs[1].Source.NativeRole)
	})
	t.Run("ATOM: hit rate over admitted tokens, computed tokens the rest", func(t *testing.T) {
		c := chartOf(t, 0, `{"metrics":{
			"atom:prefix_cache_cached_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":30}]}]},
			"atom:prefix_cache_full_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":120}]}]},
			"atom:prompt_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":100}]}]},
			"atom:requests_running":{"series":[{"timeslices":[{"start_ns":0,"avg":4}]}]}}}`)
		require.JSONEq(t, `[{"t":0,"value":0.25}]`, string(c["prefixCacheHitRate"]))
		require.JSONEq(t, `[{"t":0,"value":100}]`, string(c["prefillTps"]))
		require.JSONEq(t, `{"cache hit (HBM)":[{"t":0,"value":30}],"compute (miss)":[{"t":0,"value":90}]}`, string(c["promptTokensBySource"]))
		require.JSONEq(t, `[{"t":0,"running":4,"waiting":0,"total":4}]`, string(c["queueDepth"]))
	})
}

// llmdExport has a worker scraped explicitly, a mirror of it read through
// the gateway (a benchmarked endpoint), and a second worker.
const llmdExport = `{"input_config":{"endpoint":{"urls":["http://gw:80/v1"]},"server_metrics":{"urls":["http://w1:8000"]}},
	"metrics":{"vllm:kv_cache_usage_perc":{"series":[
		{"endpoint_url":"http://w1:8000/metrics","labels":{"engine":"0"},"timeslices":[{"start_ns":0,"avg":0.25}]},
		{"endpoint_url":"http://gw/metrics","labels":{"engine":"0"},"timeslices":[{"start_ns":0,"avg":0.25}]},
		{"endpoint_url":"http://w2:8000/metrics","labels":{"engine":"0"},"timeslices":[{"start_ns":0,"avg":0.75}]}]}}}`

func TestChartSeriesLLMD(t *testing.T) {
	t.Run("the gateway's mirror is left out, each worker is an engine", func(t *testing.T) {
		c := chartFor(t, 0, llmdExport, PointContext{Framework: "llmd-vllm"})
		require.JSONEq(t, `[{"t":0,"value":0.5}]`, string(c["kvCacheUsage"]))
		// Each engine's worker is its endpoint, whose last four characters
		// are the same: the second label gets a counter.
		require.Equal(t, []string{"0 (rics)", "0 (rics) #2"}, engineLabels(t, c))
		// Another framework keeps all three series: one label set on three
		// endpoints whose means do not all agree, so three engines, told
		// apart by host.
		c = chartFor(t, 0, llmdExport, PointContext{Framework: "vllm"})
		require.Equal(t, []string{"0 (gw)", "0 (w1:8000)", "0 (w2:8000)"}, engineLabels(t, c))
	})
	t.Run("a disaggregated llm-d point has no chart series", func(t *testing.T) {
		p := profileOf(t, rec{cid: "a", start: 1, end: 2})
		d, err := Derive(p, serverMetricsOf(t, 0, llmdExport, PointContext{Framework: "llmd-vllm", Disagg: true}))
		require.NoError(t, err)
		require.Nil(t, d.ChartSeries)
		require.Contains(t, string(d.AggregateStats), `"kvCacheUtil":{"mean":0.5,`, "the mirror is out of the statistics too")
	})
}
