package trace

import (
	"slices"

	"github.com/inferencex/ingest/ingest/ptr"
)

// Metric fallbacks: the first name of each list with any series is read.
var (
	kvNames      = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "atom:kv_cache_usage_ratio"}
	hitNames     = []string{"vllm:prefix_cache_hits", "sglang:cached_tokens", "atom:prefix_cache_cached_tokens", "trtllm_prompt_cached_tokens", "trtllm_prompt_cached_tokens_total"}
	queryNames   = []string{"vllm:prefix_cache_queries", "vllm:prompt_tokens", "sglang:prompt_tokens", "atom:prefix_cache_full_tokens", "trtllm_prompt_tokens", "trtllm_prompt_tokens_total"}
	runningNames = []string{"vllm:num_requests_running", "sglang:num_running_reqs", "atom:requests_running", "trtllm_num_requests_running"}
	waitingNames = []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "atom:requests_waiting", "trtllm_num_requests_waiting"}
	promptNames  = []string{"vllm:prompt_tokens", "sglang:prompt_tokens", "atom:prompt_tokens", "trtllm_prompt_tokens", "trtllm_prompt_tokens_total"}
	decodeNames  = []string{"vllm:generation_tokens", "sglang:generation_tokens", "atom:generation_tokens", "trtllm_generation_tokens", "trtllm_generation_tokens_total"}
)

// pick is the series of the first of names that has any.
func (m *metricsMap) pick(names ...string) []*rawSeries {
	for _, n := range names {
		if s := m.series[n]; len(s) > 0 {
			return s
		}
	}
	return nil
}

// tickSeconds is the map's scrape cadence in seconds: the median gap of
// its series with the most timeslices (the first such in map order); ok is
// false when that series has fewer than two, or no usable gap.
func (m *metricsMap) tickSeconds() (float64, bool) {
	var best *rawSeries
	for _, n := range m.names {
		for _, s := range m.series[n] {
			if best == nil && s.slices > 0 || best != nil && s.slices > best.slices {
				best = s
			}
		}
	}
	if best == nil || best.slices < 2 || !best.hasTick {
		return 0, false
	}
	return best.tick / 1e9, true
}

func byT(ps []Point) map[float64]float64 {
	m := make(map[float64]float64, len(ps))
	for _, p := range ps {
		m[p.T] = p.Value
	}
	return m
}

// pointRatio divides num by den tick for tick: a point of num at every tick
// where den has a positive value.
func pointRatio(num, den []Point) []Point {
	d := byT(den)
	out := []Point{}
	for _, p := range num {
		if v, ok := d[p.T]; ok && v > 0 {
			out = append(out, Point{T: p.T, Value: p.Value / v})
		}
	}
	return out
}

// seriesFrom computes the chart series of a metric map (the whole export's
// or one source's), timed in seconds from origin (ns). MetricSources is
// left empty.
func seriesFrom(m *metricsMap, pc PointContext, origin float64) *ChartSeries {
	tOf := func(ns float64) float64 { return (ns - origin) / 1e9 }
	tick, hasTick := m.tickSeconds()
	g := grid{tick: tick, ok: hasTick}
	summed := func(ss []*rawSeries, gauge bool) []Point {
		return g.sum(componentPoints(resolveComponents(ss, tOf, gauge)))
	}
	cs := &ChartSeries{Version: ChartSeriesVersion, PromptTokensBySource: map[string][]Point{},
		KVCacheUsageByEngine: []EngineSeries{}, MetricSources: []MetricSourceSeries{}}

	// KV-cache usage: the mean over logical engines; TensorRT-LLM's own
	// gauge, or Dynamo's per-rank one beside it, when no other has series.
	kv := m.pick(kvNames...)
	if kv == nil {
		kv = trtKVSeries(m, pc)
	}
	engines := resolveLogicalEngines(kv, tOf)
	cs.KVCacheUsage = averageAcrossEngines(engines)
	if len(engines) > 1 {
		cs.KVCacheUsageByEngine = engines
	}

	// Prefix-cache hit rate: Σ hits / Σ queries per tick; else a gauge.
	cs.PrefixCacheHitsTps = summed(m.pick(hitNames...), false)
	querySeries := m.pick(queryNames...)
	cs.PrefixCacheHitRate = pointRatio(cs.PrefixCacheHitsTps, summed(querySeries, false))
	if len(cs.PrefixCacheHitRate) == 0 {
		cs.PrefixCacheHitRate = averageAcrossEngines(resolveLogicalEngines(m.pick("trtllm_kv_cache_hit_rate", "atom:prefix_cache_hit_ratio"), tOf))
	}

	// Queue depth: running and waiting summed, on the union of their ticks.
	run := byT(summed(m.pick(runningNames...), true))
	wait := byT(summed(m.pick(waitingNames...), true))
	ticks := make([]float64, 0, len(run)+len(wait))
	for t := range run {
		ticks = append(ticks, t)
	}
	for t := range wait {
		if _, ok := run[t]; !ok {
			ticks = append(ticks, t)
		}
	}
	slices.Sort(ticks)
	cs.QueueDepth = make([]QueuePoint, 0, len(ticks))
	for _, t := range ticks {
		r, w := run[t], wait[t]
		cs.QueueDepth = append(cs.QueueDepth, QueuePoint{T: t, Running: r, Waiting: w, Total: r + w})
	}

	// Throughput: counter rates summed on the grid. TensorRT-LLM has no
	// prompt counter: its prompt rate is the prefill batches' tokens plus
	// the cached ones.
	promptTps := summed(m.pick(promptNames...), false)
	cs.DecodeTps = summed(m.pick(decodeNames...), false)
	trtPrompt := summed(m.series["trtllm_prefill_batch_tokens"], false)
	cs.PrefillTps = promptTps
	if len(promptTps) == 0 {
		cs.PrefillTps = g.sum([][]Point{trtPrompt, cs.PrefixCacheHitsTps})
	}
	if len(cs.PrefixCacheHitRate) == 0 && len(querySeries) == 0 {
		cs.PrefixCacheHitRate = pointRatio(cs.PrefixCacheHitsTps, cs.PrefillTps)
	}

	// Host (CPU offload) KV-cache usage: SGLang's used / total tokens, else
	// TensorRT-LLM's gauge.
	cs.HostKVCacheUsage = pointRatio(summed(m.series["sglang:hicache_host_used_tokens"], true),
		summed(m.series["sglang:hicache_host_total_tokens"], true))
	if len(cs.HostKVCacheUsage) == 0 {
		cs.HostKVCacheUsage = averageAcrossEngines(resolveLogicalEngines(m.series["trtllm_kv_cache_host_utilization"], tOf))
	}

	promptTokensBySource(cs, m, summed, trtPrompt, promptTps)
	return cs
}

// trtKVSeries are TensorRT-LLM's KV-cache gauges: under its adapter,
// Dynamo's per-rank gauge (each series marked with its endpoint, so two
// workers' ranks are never taken for mirrors), then TensorRT-LLM's own of
// the endpoints Dynamo's does not cover.
func trtKVSeries(m *metricsMap, pc PointContext) []*rawSeries {
	var out []*rawSeries
	ranked := map[string]bool{}
	hasNil := false
	if pc.adapter() == adapterTRTLLM {
		for _, s := range m.series["dynamo_component_gpu_cache_usage_percent"] {
			cp := *s
			cp.labels = labelsWith(s.labels, [2]string{"metric_endpoint", ptr.Deref(s.endpoint)})
			if s.endpoint != nil {
				ranked[*s.endpoint] = true
			} else {
				hasNil = true
			}
			out = append(out, &cp)
		}
	}
	for _, s := range m.series["trtllm_kv_cache_utilization"] {
		if s.endpoint == nil && hasNil || s.endpoint != nil && ranked[*s.endpoint] {
			continue
		}
		out = append(out, s)
	}
	return out
}

// promptTokensBySource fills the prompt-token sources: vLLM's
// prompt_tokens_by_source per source label; else SGLang's cache misses
// (realtime tokens in prefill_compute mode) and cache hits per cache
// source; else cache hits and computed tokens derived from the counters.
// Each source is summed on the grid, its idle ticks left out.
func promptTokensBySource(cs *ChartSeries, m *metricsMap, summed func([]*rawSeries, bool) []Point, trtPrompt, promptTps []Point) {
	var order []string
	bySrc := map[string][]*rawSeries{}
	add := func(label string, s *rawSeries) {
		if _, ok := bySrc[label]; !ok {
			order = append(order, label)
		}
		bySrc[label] = append(bySrc[label], s)
	}
	for _, s := range m.series["vllm:prompt_tokens_by_source"] {
		if l := label(s.labels, "source", "reason", "kind"); l != nil {
			add(*l, s)
		} else {
			add(s.labelsJSON, s)
		}
	}
	if len(order) == 0 {
		for _, s := range m.series["sglang:realtime_tokens"] {
			if mode, ok := s.labels["mode"]; ok && mode == "prefill_compute" {
				add("compute (miss)", s)
			}
		}
		for _, s := range m.series["sglang:cached_tokens"] {
			src, ok := s.labels["cache_source"]
			if !ok {
				src = "cache hit"
			}
			var label string
			switch src {
			case "device":
				label = "cache hit (HBM)"
			case "host":
				label = "cache hit (CPU offload)"
			case "total":
				label = "cache hit"
			default:
				label = "cache hit (" + src + ")"
			}
			add(label, s)
		}
	}
	for _, label := range order {
		if ps := positive(summed(bySrc[label], false)); len(ps) > 0 {
			cs.PromptTokensBySource[label] = ps
		}
	}
	if len(cs.PromptTokensBySource) > 0 {
		return
	}
	cached := positive(cs.PrefixCacheHitsTps)
	var computed []Point
	if len(trtPrompt) > 0 {
		computed = positive(trtPrompt)
	} else {
		prompt := promptTps
		if m.has("atom:prefix_cache_full_tokens") {
			prompt = summed(m.series["atom:prefix_cache_full_tokens"], false)
		}
		hits := byT(cs.PrefixCacheHitsTps)
		for _, p := range prompt {
			if v := max(0, p.Value-hits[p.T]); v > 0 {
				computed = append(computed, Point{T: p.T, Value: v})
			}
		}
	}
	if len(cached) > 0 {
		cs.PromptTokensBySource["cache hit (HBM)"] = cached
	}
	if len(computed) > 0 {
		cs.PromptTokensBySource["compute (miss)"] = computed
	}
}

// positive are the points with a value above zero.
func positive(ps []Point) []Point {
	var out []Point
	for _, p := range ps {
		if p.Value > 0 {
			out = append(out, p)
		}
	}
	return out
}
