package trace

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// csvRow is one series of a scrape built by scrapeCSV.
type csvRow struct {
	gauge    bool
	metric   string
	value    float64
	endpoint string
	labels   map[string]string
}

// scrapeCSV writes an AIPerf-shaped export: a gauge section (avg, min,
// max) and a counter section (total), label columns after the stats.
func scrapeCSV(rows []csvRow) string {
	names := map[string]bool{}
	for _, r := range rows {
		for k := range r.labels {
			names[k] = true
		}
	}
	var labels []string
	for k := range names {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	var b strings.Builder
	b.WriteString("# AIPerf Server Metrics Export (CSV)\n#\n")
	section := func(gauge bool, stats []string) {
		b.WriteString("Endpoint,Type,Metric,Unit," + strings.Join(stats, ","))
		for _, l := range labels {
			b.WriteString("," + l)
		}
		b.WriteString(",Description\n")
		for _, r := range rows {
			if r.gauge != gauge {
				continue
			}
			ep, typ := r.endpoint, "counter"
			if ep == "" {
				ep = "localhost:8000"
			}
			if gauge {
				typ = "gauge"
			}
			b.WriteString(ep + "," + typ + "," + r.metric + ",")
			for range stats {
				b.WriteString("," + strconv.FormatFloat(r.value, 'f', -1, 64))
			}
			for _, l := range labels {
				b.WriteString("," + r.labels[l])
			}
			b.WriteString(",description\n")
		}
	}
	section(true, []string{"avg", "min", "max"})
	b.WriteString("\n")
	section(false, []string{"total"})
	return b.String()
}

func mustScrape(t *testing.T, csv string) Scrape {
	t.Helper()
	s, err := ReadScrape(strings.NewReader(csv))
	require.NoError(t, err)
	return s
}

// A real export's sections each carry their own stat and label columns;
// info sections hold no series; counters add up across endpoints; gauges
// take the maximum; percentages become fractions.
func TestReadScrapeSections(t *testing.T) {
	const csv = `# AIPerf Server Metrics Export (CSV)
#
Endpoint,Type,Metric,Unit,avg,min,max,std,p50,engine,model_name,Description
localhost:8000,gauge,vllm:kv_cache_usage_perc,ratio,0.0559,0.0000,0.1697,0.04,0.05,0,Kimi,"KV-cache usage, 1 means 100 percent"

Endpoint,Type,Metric,Unit,total,rate,rate_avg,engine,model_name,source,Description
localhost:8000,counter,vllm:prompt_tokens,tokens,1000.0000,1.0,1.0,0,Kimi,,Prefill tokens.
localhost:8001,counter,vllm:prompt_tokens,tokens,500.0000,1.0,1.0,1,Kimi,,Prefill tokens.
localhost:8000,counter,vllm:prompt_tokens_by_source,,700.0000,1.0,1.0,0,Kimi,local_compute,"By source, ""quoted"""
localhost:8001,counter,vllm:prompt_tokens_by_source,,300.0000,1.0,1.0,1,Kimi,local_compute,By source.

Endpoint,Metric,Key,Value,Description
localhost:8000,vllm:cache_config_info,block_size,64,Info.
`
	s := mustScrape(t, csv)
	require.Equal(t, []ScrapeSeries{{Endpoint: "localhost:8000", Labels: map[string]string{"engine": "0", "model_name": "Kimi"},
		Stats: map[string]float64{"avg": 0.0559, "min": 0, "max": 0.1697, "std": 0.04, "p50": 0.05}}}, s["vllm:kv_cache_usage_perc"])
	require.Equal(t, map[string]string{"engine": "1", "model_name": "Kimi"}, s["vllm:prompt_tokens"][1].Labels)
	require.NotContains(t, s, "vllm:cache_config_info")
	require.Equal(t, some(1500), s.sum("vllm:prompt_tokens"))
	require.False(t, s.sum("missing").ok)
	require.Equal(t, map[string]float64{"local_compute": 1000}, s.sumByLabel("vllm:prompt_tokens_by_source", "source"))
	require.Equal(t, some(0.1697), s.gaugeMax("vllm:kv_cache_usage_perc"))
	require.Equal(t, some(0.42), fraction(some(42)))
	require.Equal(t, some(0.42), fraction(some(0.42)))
}

// The per-engine scrape scalars, with the reference tests' numbers.
func TestEngineScrapeScalars(t *testing.T) {
	src := func(s string) map[string]string { return map[string]string{"source": s} }
	cs := func(s string) map[string]string { return map[string]string{"cache_source": s} }
	cases := []struct {
		name   string
		engine engine
		rows   []csvRow
		want   scrapeScalars
	}{
		{"vllm prefers token-source counters over prefix-cache queries", vllmEngine, []csvRow{
			{metric: "vllm:prompt_tokens", value: 1000}, {metric: "vllm:generation_tokens", value: 50},
			{metric: "vllm:prefix_cache_hits", value: 10}, {metric: "vllm:prefix_cache_queries", value: 100},
			{metric: "vllm:prompt_tokens_by_source", value: 600, labels: src("local_cache_hit")},
			{metric: "vllm:prompt_tokens_by_source", value: 300, labels: src("external_kv_transfer")},
			{metric: "vllm:prompt_tokens_by_source", value: 100, labels: src("local_compute")},
			{gauge: true, metric: "vllm:kv_cache_usage_perc", value: 0.25}},
			scrapeScalars{some(0.6), some(0.3), some(0.3), some(0.25), some(1000), some(50)}},
		{"sglang splits device and HiCache host hits", sglangEngine, []csvRow{
			{metric: "sglang:prompt_tokens", value: 1000}, {metric: "sglang:generation_tokens", value: 40},
			{metric: "sglang:cached_tokens", value: 700, labels: cs("device")},
			{metric: "sglang:cached_tokens", value: 100, labels: cs("host")},
			{gauge: true, metric: "sglang:token_usage", value: 58}},
			scrapeScalars{some(0.7), some(0.1), some(0.1), some(0.58), some(1000), some(40)}},
		{"trtllm falls back to cached prompt tokens", trtllmEngine, []csvRow{
			{metric: "trtllm_prompt_tokens_total", value: 1800}, {metric: "trtllm_prompt_cached_tokens_total", value: 450},
			{metric: "trtllm_generation_tokens_total", value: 30}, {gauge: true, metric: "trtllm_kv_cache_utilization", value: 0.5}},
			scrapeScalars{gpuHit: some(0.25), kvUsage: some(0.5), prompt: some(1800), generation: some(30)}},
		{"trtllm hit-rate gauge in percent", trtllmEngine, []csvRow{{gauge: true, metric: "trtllm_kv_cache_hit_rate", value: 97}},
			scrapeScalars{gpuHit: some(0.97)}},
		{"atom admitted prefix-cache and LMCache counters", atomEngine, []csvRow{
			{metric: "atom:prompt_tokens_total", value: 1000}, {metric: "atom_generation_tokens", value: 25},
			{metric: "atom:prefix_cache_full_tokens", value: 800}, {metric: "atom:prefix_cache_cached_tokens", value: 600},
			{metric: "atom:lmcache_loaded_tokens", value: 200}, {gauge: true, metric: "atom:kv_cache_usage_ratio", value: 0.4}},
			scrapeScalars{some(0.75), some(0.25), some(0.25), some(0.4), some(1000), some(25)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.engine.scalars(mustScrape(t, scrapeCSV(c.rows)))
			for _, o := range []*optional{&got.gpuHit, &got.cpuHit, &got.externalHit, &got.kvUsage} {
				o.v = math.Round(o.v*1e12) / 1e12
			}
			require.Equal(t, c.want, got)
		})
	}
}

// The per-engine KV-cache pools from worker startup lines and scrapes.
func TestEnginePools(t *testing.T) {
	agg := func(workers ...[]string) poolInput {
		return poolInput{workers: workers, scrape: Scrape{}, topology: roleTopology{tp: 8}}
	}
	rank := func(dp, tokens int) string {
		return "[DP" + strconv.Itoa(dp) + " TP" + strconv.Itoa(dp) + " EP" + strconv.Itoa(dp) + "] max_total_num_tokens=" + strconv.Itoa(tokens) + ", context_len=1048576"
	}
	vllmLine := []string{"(EngineCore pid=1) GPU KV cache size: 100 tokens"}
	pinned := agg(vllmLine)
	pinned.topology.workers = 2
	pinnedBoth := pinned
	pinnedBoth.workers = [][]string{vllmLine, vllmLine}
	trt := func(endpoints map[string]float64, dpAttention bool, workers int) poolInput {
		var rows []csvRow
		for ep, blocks := range endpoints {
			rows = append(rows, csvRow{gauge: true, metric: "trtllm_kv_cache_max_blocks", value: blocks, endpoint: ep},
				csvRow{gauge: true, metric: "trtllm_kv_cache_tokens_per_block", value: 128, endpoint: ep})
		}
		s, _ := ReadScrape(strings.NewReader(scrapeCSV(rows)))
		return poolInput{scrape: s, topology: roleTopology{tp: 4, dpAttention: dpAttention, workers: workers}}
	}
	const capacity = "[atom 12:33:14] Concurrent capacity vs context length (max_model_len=1048576, block_size=128, max_slots=32, pool_blocks=8687, dcp=8 (blk/req is per-rank)):"
	atom := func(blocks []float64, workers ...[]string) poolInput {
		var rows []csvRow
		for _, b := range blocks {
			rows = append(rows, csvRow{gauge: true, metric: "atom:kv_cache_blocks_total", value: b})
		}
		s, _ := ReadScrape(strings.NewReader(scrapeCSV(rows)))
		return poolInput{workers: workers, scrape: s, topology: roleTopology{tp: 8}}
	}
	cases := []struct {
		name   string
		engine engine
		in     poolInput
		want   int64
		why    string
	}{
		{"vllm: one pool per DP engine core, headless hosts merged, reprints once", vllmEngine, agg([]string{
			"data_parallel_size=2",
			"(EngineCore_DP0 pid=11) INFO [kv_cache_utils.py:2235] GPU KV cache size: 1,226,636 tokens",
			"(EngineCore_DP0 pid=11) INFO [kv_cache_utils.py:2235] GPU KV cache size: 1,226,636 tokens",
			"(EngineCore_DP1 pid=12) INFO [kv_cache_utils.py:2235] GPU KV cache size: 1,224,353 tokens"}), 2_450_989, ""},
		{"vllm: DP engine cores not all logged", vllmEngine, agg([]string{"data_parallel_size=4", "(EngineCore_DP0 pid=1) GPU KV cache size: 100 tokens"}), 0, "1 of 4 DP engine cores logged"},
		{"vllm: a pinned role misses a worker", vllmEngine, pinned, 0, "1 of 2 worker logs"},
		{"vllm: a pinned role with every worker", vllmEngine, pinnedBoth, 200, ""},
		{"sglang: TP ranks of one DP rank share a pool", sglangEngine, agg([]string{
			"[2026-08-03 23:23:57 TP0] max_total_num_tokens=2693376, chunked_prefill_size=8192",
			"[2026-08-03 23:23:57 TP8] max_total_num_tokens=2693376, chunked_prefill_size=8192"}), 2_693_376, ""},
		{"sglang: one logged DP rank scales by dp_size", sglangEngine, agg([]string{"dp_size=8",
			"[2026-08-20 DP0 TP0 EP0] max_total_num_tokens=218560, chunked_prefill_size=8192"}), 1_748_480, ""},
		{"sglang: every DP rank logged", sglangEngine, agg([]string{"dp_size=2", rank(0, 100), rank(1, 90)}), 190, ""},
		{"sglang: a partial set of DP ranks", sglangEngine, agg([]string{"dp_size=4", rank(0, 100), rank(1, 90)}), 0, "2 of 4 DP ranks logged"},
		{"trtllm: endpoint pools from exported blocks", trtllmEngine, trt(map[string]float64{"10.0.0.1:7500": 62762, "10.0.0.2:7501": 62830}, false, 2), 16_075_776, ""},
		{"trtllm: attention DP exports rank 0 only", trtllmEngine, trt(map[string]float64{"10.0.0.1:7500": 97089}, true, 0), 0, "attention-DP exports rank 0 capacity only"},
		{"trtllm: one endpoint per pinned worker", trtllmEngine, trt(map[string]float64{"10.0.0.1:7500": 1000}, false, 3), 0, "1 of 3 worker endpoints scraped"},
		{"atom: allocated blocks × block size × DCP", atomEngine, atom([]float64{8414}, []string{capacity, strings.Replace(capacity, "8687", "8702", 1)}), 8_615_936, ""},
		{"atom: changing block count", atomEngine, atom([]float64{8414, 8500}, []string{capacity}), 0, "no constant allocated block count"},
		{"atom: inconsistent block size", atomEngine, atom([]float64{8414}, []string{capacity, strings.Replace(capacity, "block_size=128", "block_size=256", 1)}), 0, "no consistent block size"},
		{"atom: two worker logs", atomEngine, atom([]float64{8414}, []string{capacity}, []string{capacity}), 0, "2 worker logs; one is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, why := c.engine.pool(c.in)
			require.Equal(t, c.why, why)
			require.Equal(t, c.want, n)
		})
	}
}

func TestWorkerOfLogFile(t *testing.T) {
	cases := []struct {
		name, role, worker string
		ok                 bool
	}{
		{"multinode_server_logs/logs/im-gb300-r01-c002_prefill_w0.out", "prefill", "0", true},
		{"srt-single-node-logs/logs/worker-4_agg_w0.out", "agg", "0", true},
		{"logs/vr-r41-cn06_decode_w12.out", "decode", "12", true},
		{"prefill0_mia1-p01-g18.log", "prefill", "0", true},
		{"decode_mia1-p01-g50.log", "decode", "0", true},
		{"results/server.log", "agg", "0", true},
		{"server_mia1-p01-g18.log", "", "", false},
		{"logs/im-gb300-r01-c001_frontend_0.out", "", "", false},
		{"benchmark.out", "", "", false},
	}
	for _, c := range cases {
		r, w, ok := WorkerOfLogFile(c.name)
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, c.role, string(r), c.name)
		require.Equal(t, c.worker, w, c.name)
	}
}

// Whole startup lines and argument tokens are kept; a suffixed key
// (attn_dp_size) is not a token, and a progress line is not a startup line.
func TestStartupLines(t *testing.T) {
	s := NewStartupLines()
	_, _ = s.Write([]byte("progress " + strings.Repeat("x", 50) + "\n[2026-08-20 DP0 TP0 EP0] max_total_num_tokens=218560, chunked_prefill_size=8192\n"))
	_, _ = s.Write([]byte("server_args=ServerArgs(tp_size=8, attn_dp_size=1, dp_size=8, enable_dp_attention=True)\n[2026-08-20 DP0 TP0 EP0] max_total_num_"))
	_, _ = s.Write([]byte("tokens=218560, chunked_prefill_size=8192"))
	require.NoError(t, s.Close())
	require.Equal(t, []string{"[2026-08-20 DP0 TP0 EP0] max_total_num_tokens=218560, chunked_prefill_size=8192", "dp_size=8"}, s.Lines)
}

// A startup line's mark must start within its first 255 characters
// (runes, not bytes); a mark after that is not a startup line.
func TestIsStartupLine(t *testing.T) {
	mark := "GPU KV cache size: 1,234 tokens"
	cases := []struct {
		name string
		line string
		want bool
	}{
		{"at the start", mark, true},
		{"after 255 characters", strings.Repeat("x", 255) + mark, true},
		{"after 256 characters", strings.Repeat("x", 256) + mark, false},
		{"255 two-byte characters", strings.Repeat("é", 255) + mark, true},
		{"256 two-byte characters", strings.Repeat("é", 256) + mark, false},
		{"an invalid byte counts as one", "\xff" + strings.Repeat("x", 254) + mark, true},
		{"mark without its number", "GPU KV cache size: tokens", false},
		{"a late mark does not hide an early one", "max_total_num_tokens=5 " + strings.Repeat("x", 300) + mark, true},
		{"the other marks", "[TP0] Concurrent capacity vs context length", true},
	}
	for _, c := range cases {
		require.Equal(t, c.want, isStartupLine([]byte(c.line)), c.name)
	}
}

// deriveIn is a disaggregated dynamo-sglang point: one prefill worker,
// two decode workers.
func deriveIn() ServerMetricsInput {
	return ServerMetricsInput{Framework: "dynamo-sglang", Disagg: true, Prefill: RoleConfig{TP: 8, NumWorkers: 1},
		Decode: RoleConfig{TP: 8, NumWorkers: 2}, Logs: []LogFileLines{}, ClientPrompt: math.NaN(), ClientGeneration: math.NaN()}
}

func sgl(tokens int) []string {
	return []string{"[TP0] max_total_num_tokens=" + strconv.Itoa(tokens) + ", context_len=1048576"}
}

func TestDeriveServerMetrics(t *testing.T) {
	disaggEngine := []csvRow{
		{metric: "sglang:prompt_tokens", value: 2000, endpoint: "p:1", labels: map[string]string{"dynamo_component": "prefill"}},
		{metric: "sglang:prompt_tokens", value: 1900, endpoint: "d:1", labels: map[string]string{"dynamo_component": "backend"}},
	}
	frontend := csvRow{metric: "dynamo_frontend_input_sequence_tokens", value: 1950}
	blocks := func(ep, component string, v float64) []csvRow {
		l := map[string]string{"dynamo_component": component}
		return []csvRow{{gauge: true, metric: "trtllm_kv_cache_max_blocks", value: v, endpoint: ep, labels: l},
			{gauge: true, metric: "trtllm_kv_cache_tokens_per_block", value: 128, endpoint: ep, labels: l}}
	}
	cases := []struct {
		name   string
		edit   func(*ServerMetricsInput)
		want   map[string]float64 // keys checked; NaN means absent
		reason string
	}{
		{"disaggregated: both role pools, decode is the headline", func(in *ServerMetricsInput) {
			in.Logs = []LogFileLines{{"logs/a_prefill_w0.out", sgl(300)}, {"logs/b_decode_w0.out", sgl(100)}, {"logs/c_decode_w1.out", sgl(110)}}
		}, map[string]float64{"kv_cache_pool_tokens": 210, "kv_cache_pool_prefill_tokens": 300, "kv_cache_pool_decode_tokens": 210}, ""},
		{"a role missing a worker log", func(in *ServerMetricsInput) {
			in.Logs = []LogFileLines{{"logs/a_prefill_w0.out", sgl(300)}, {"logs/b_decode_w0.out", sgl(100)}}
		}, map[string]float64{"kv_cache_pool_tokens": math.NaN(), "kv_cache_pool_prefill_tokens": 300}, "decode: 1 of 2 worker logs"},
		{"aggregated: no role pools", func(in *ServerMetricsInput) {
			in.Framework, in.Disagg = "sglang", false
			in.Logs = []LogFileLines{{"results/server.log", sgl(500)}}
		}, map[string]float64{"kv_cache_pool_tokens": 500, "kv_cache_pool_decode_tokens": math.NaN()}, ""},
		{"no server log stored", func(in *ServerMetricsInput) { in.Logs = nil }, map[string]float64{"kv_cache_pool_tokens": math.NaN()}, "no server log stored"},
		{"unsupported framework", func(in *ServerMetricsInput) { in.Framework = "new-engine" }, map[string]float64{}, "unsupported framework new-engine"},
		{"disaggregated tokens: the Dynamo frontend", func(in *ServerMetricsInput) {
			in.Scrape, in.ClientPrompt = mustScrape(t, scrapeCSV(append(disaggEngine, frontend))), 1940
		}, map[string]float64{"total_prompt_tokens": 1950}, "decode: no worker log"},
		{"disaggregated tokens: else the client", func(in *ServerMetricsInput) {
			in.Scrape, in.ClientPrompt = mustScrape(t, scrapeCSV(disaggEngine)), 1940
		}, map[string]float64{"total_prompt_tokens": 1940}, "decode: no worker log"},
		{"aggregated tokens: the engine counters", func(in *ServerMetricsInput) {
			in.Disagg = false
			in.Scrape, in.ClientPrompt = mustScrape(t, scrapeCSV(disaggEngine)), 1940
		}, map[string]float64{"total_prompt_tokens": 3900}, "agg: no worker log"},
		{"disaggregated hit rates from prefill workers; Dynamo KV gauge", func(in *ServerMetricsInput) {
			in.Scrape = mustScrape(t, scrapeCSV([]csvRow{
				{metric: "sglang:prompt_tokens", value: 1000, endpoint: "p:1", labels: map[string]string{"dynamo_component": "prefill", "cache_source": ""}},
				{metric: "sglang:cached_tokens", value: 900, endpoint: "p:1", labels: map[string]string{"dynamo_component": "prefill", "cache_source": "device"}},
				{metric: "sglang:prompt_tokens", value: 1000, endpoint: "d:1", labels: map[string]string{"dynamo_component": "backend", "cache_source": ""}},
				{gauge: true, metric: "dynamo_component_gpu_cache_usage_percent", value: 0.4},
			}))
		}, map[string]float64{"server_gpu_cache_hit_rate": 0.9, "gpu_kv_cache_usage_pct": 0.4}, "decode: no worker log"},
		{"a hit rate above 1 is null", func(in *ServerMetricsInput) {
			in.Framework, in.Disagg = "sglang", false
			in.Scrape = mustScrape(t, scrapeCSV([]csvRow{
				{metric: "sglang:prompt_tokens", value: 1000, labels: map[string]string{"cache_source": ""}},
				{metric: "sglang:cached_tokens", value: 1010, labels: map[string]string{"cache_source": "device"}},
			}))
		}, map[string]float64{"server_gpu_cache_hit_rate": math.NaN(), "total_prompt_tokens": 1000}, "agg: no worker log"},
		{"client totals without server counters, rounded", func(in *ServerMetricsInput) {
			in.ClientPrompt, in.ClientGeneration = 1234.4, 56.6
		}, map[string]float64{"total_prompt_tokens": 1234, "total_generation_tokens": 57}, "decode: no worker log"},
		{"a disaggregated role reads its own endpoints", func(in *ServerMetricsInput) {
			in.Framework, in.Decode.NumWorkers = "dynamo-trt", 1
			in.Scrape = mustScrape(t, scrapeCSV(append(blocks("p:1", "prefill", 10), blocks("d:1", "backend", 20)...)))
		}, map[string]float64{"kv_cache_pool_prefill_tokens": 1280, "kv_cache_pool_tokens": 2560}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := deriveIn()
			c.edit(&in)
			got := DeriveServerMetrics(in)
			for k, v := range c.want {
				if math.IsNaN(v) {
					require.NotContains(t, got.Values, k)
					continue
				}
				require.Contains(t, got.Values, k)
				require.InDelta(t, v, got.Values[k], 1e-9, k)
			}
			require.Equal(t, c.reason, got.PoolReason)
			for k := range got.Values {
				require.Contains(t, ServerMetricKeys, k)
			}
		})
	}
}
