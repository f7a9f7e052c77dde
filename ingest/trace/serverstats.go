package trace

// Metric fallbacks of the aggregate statistics (the first with any series
// is read).
var (
	statKVNames    = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "atom:kv_cache_usage_ratio", "trtllm_kv_cache_utilization"}
	statHitNames   = []string{"vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits", "sglang:cached_tokens", "atom:prefix_cache_cached_tokens", "trtllm_prompt_cached_tokens", "trtllm_prompt_cached_tokens_total"}
	statQueryNames = []string{"vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries", "vllm:prompt_tokens", "sglang:prompt_tokens", "atom:prefix_cache_full_tokens", "trtllm_prompt_tokens", "trtllm_prompt_tokens_total"}
)

// byStartSums sums the samples of series by start, in the order the starts
// were first seen, with the count of each.
type byStartSums struct {
	order []float64
	sums  map[float64]*[2]float64
}

func sumByStart(ss []*rawSeries) *byStartSums {
	b := &byStartSums{sums: map[float64]*[2]float64{}}
	for _, s := range ss {
		for _, x := range s.samples {
			a := b.sums[x.start]
			if a == nil {
				a = &[2]float64{}
				b.sums[x.start] = a
				b.order = append(b.order, x.start)
			}
			a[0] += x.value
			a[1]++
		}
	}
	return b
}

func (b *byStartSums) means() []float64 {
	out := make([]float64, len(b.order))
	for i, t := range b.order {
		out[i] = b.sums[t][0] / b.sums[t][1]
	}
	return out
}

// serverSamples are the samples of the aggregate statistics from the
// profiling block: per timeslice start, the KV-cache utilization (mean over
// series) and the prefix-cache hit rate (Σ hits / Σ queries, where queries
// are positive; else, without any, TensorRT-LLM's or ATOM's hit-rate gauge,
// mean over series). A streamed export is read for the aggregated metrics
// only.
func (c *chartCollector) serverSamples(streamed bool) (kv, hit []float64) {
	c.normalize()
	var keep func(string) bool
	if streamed {
		keep = func(n string) bool { return aggregateKeys[n] }
	}
	m := c.merged(profilingOnly, keep)
	kv = sumByStart(m.pick(statKVNames...)).means()
	hits, qs := sumByStart(m.pick(statHitNames...)), sumByStart(m.pick(statQueryNames...))
	for _, t := range hits.order {
		if q, ok := qs.sums[t]; ok && q[0] > 0 {
			hit = append(hit, hits.sums[t][0]/q[0])
		}
	}
	if len(hit) == 0 {
		hit = sumByStart(m.pick("trtllm_kv_cache_hit_rate", "atom:prefix_cache_hit_ratio")).means()
	}
	return kv, hit
}
