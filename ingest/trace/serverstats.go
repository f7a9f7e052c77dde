package trace

// Metric fallbacks of the aggregate statistics (the first with any series
// is read).
var (
	statKVNames    = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "atom:kv_cache_usage_ratio", "trtllm_kv_cache_utilization"}
	statHitNames   = []string{"vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits", "sglang:cached_tokens", "atom:prefix_cache_cached_tokens", "trtllm_prompt_cached_tokens", "trtllm_prompt_cached_tokens_total"}
	statQueryNames = []string{"vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries", "vllm:prompt_tokens", "sglang:prompt_tokens", "atom:prefix_cache_full_tokens", "trtllm_prompt_tokens", "trtllm_prompt_tokens_total"}
)

// scrapesOf sums the samples of series by start (their values and count),
// as the statistics group every series of a metric.
func scrapesOf(ss []*rawSeries) *scrapes {
	sc := newScrapes()
	for _, s := range ss {
		for _, x := range s.samples {
			sc.add(x.start, x.value)
		}
	}
	return sc
}

// serverSamples are the samples of the aggregate statistics from the
// profiling block: per timeslice start, the KV-cache utilization (mean over
// series) and the prefix-cache hit rate (Σ hits / Σ queries, where queries
// are positive; else, without any, TensorRT-LLM's or ATOM's hit-rate gauge,
// mean over series). A streamed export is read for the aggregated metrics
// only.
func (c *chartCollector) serverSamples() (kv, hit []float64) {
	c.normalize()
	var keep func(string) bool
	if c.streamed {
		keep = func(n string) bool { return aggregateKeys[n] }
	}
	m := c.merged(profilingOnly, keep)
	kv = scrapesOf(m.pick(statKVNames...)).means()
	hits, qs := scrapesOf(m.pick(statHitNames...)), scrapesOf(m.pick(statQueryNames...))
	for _, t := range hits.order {
		if q, ok := qs.at[t]; ok && q[0] > 0 {
			hit = append(hit, hits.at[t][0]/q[0])
		}
	}
	if len(hit) == 0 {
		hit = scrapesOf(m.pick("trtllm_kv_cache_hit_rate", "atom:prefix_cache_hit_ratio")).means()
	}
	return kv, hit
}
