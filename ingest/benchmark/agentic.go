package benchmark

import "github.com/inferencex/ingest/schema"

// AgentX (agentic-traces) rows: the v3 nested layout and the interactivity
// rules that keep one definition of *_itl / *_intvty across harness versions.

// v3 stat block keys in the order they are applied (median after p50, so an
// explicit median wins) and the flat stat name each becomes.
var v3Stats = [][2]string{
	{"mean", "mean"}, {"p50", "median"}, {"median", "median"}, {"p75", "p75"}, {"p90", "p90"},
	{"p95", "p95"}, {"p99", "p99"}, {"p99.9", "p99.9"}, {"std", "std"},
}

// v3Blocks maps a stat block path to the suffix of its flat keys.
var v3Blocks = []struct {
	path   []string
	suffix string
}{
	{[]string{"request_metrics", "latency", "ttft"}, "ttft"},
	{[]string{"request_metrics", "latency", "e2el"}, "e2el"},
	{[]string{"request_metrics", "latency", "itl"}, "itl"},
	{[]string{"request_metrics", "latency", "tpot"}, "tpot"},
	{[]string{"request_metrics", "latency", "intvty"}, "intvty"},
	{[]string{"request_metrics", "latency", "full_response_itl"}, "full_response_itl"},
	{[]string{"request_metrics", "latency", "full_response_intvty"}, "full_response_intvty"},
	{[]string{"request_metrics", "qps"}, "qps"},
	{[]string{"request_metrics", "tokens", "input"}, "input_tokens"},
	{[]string{"request_metrics", "tokens", "output_actual"}, "output_tokens_actual"},
	{[]string{"request_metrics", "tokens", "output_expected"}, "output_tokens_expected"},
}

// v3Keys[b][s] is the flat key of stat v3Stats[s] of block v3Blocks[b]
// ("median_ttft").
var v3Keys = func() [][]string {
	keys := make([][]string, len(v3Blocks))
	for b, block := range v3Blocks {
		for _, st := range v3Stats {
			keys[b] = append(keys[b], st[1]+"_"+block.suffix)
		}
	}
	return keys
}()

// v3Scalars maps scalar paths to flat metric keys.
var v3Scalars = []struct {
	path []string
	key  string
}{
	{[]string{"request_metrics", "throughput", "input", "tokens_per_second"}, "input_tput_tps"},
	{[]string{"request_metrics", "throughput", "output", "tokens_per_second"}, "output_tput_tps"},
	{[]string{"request_metrics", "throughput", "total", "tokens_per_second"}, "total_tput_tps"},
	{[]string{"request_metrics", "throughput", "duration_seconds"}, "duration_seconds"},
	{[]string{"request_metrics", "throughput", "per_gpu", "total_tput_tps"}, "tput_per_gpu"},
	{[]string{"request_metrics", "throughput", "per_gpu", "output_tput_tps"}, "output_tput_per_gpu"},
	{[]string{"request_metrics", "throughput", "per_gpu", "input_tput_tps"}, "input_tput_per_gpu"},
	{[]string{"request_metrics", "cache", "theoretical_cache_hit_rate"}, "theoretical_cache_hit_rate"},
	{[]string{"server_metrics", "cache", "gpu_cache_hit_rate"}, "server_gpu_cache_hit_rate"},
	{[]string{"server_metrics", "cache", "cpu_cache_hit_rate"}, "server_cpu_cache_hit_rate"},
	{[]string{"server_metrics", "cache", "external_cache_hit_rate"}, "server_external_cache_hit_rate"},
	{[]string{"server_metrics", "kv_cache", "gpu_usage_pct"}, "gpu_kv_cache_usage_pct"},
	{[]string{"server_metrics", "tokens", "prompt_total"}, "total_prompt_tokens"},
	{[]string{"server_metrics", "tokens", "generation_total"}, "total_generation_tokens"},
	{[]string{"server_metrics", "tokens", "requests_completed"}, "total_requests_completed"},
}

// interactivityStats are the stats whose interactivity is 1 / ITL.
var interactivityStats = []string{"mean", "median", "p75", "p90", "p95", "p99", "p99.9"}

// flattenV3 maps a v3 row (nested request_metrics object) onto the flat
// metric keys. It returns a shallow copy of row with the flat keys merged
// over it; the nested containers stay (they are non-metric keys). Rows
// without a request_metrics object are returned unchanged. Values are
// copied raw when numeric, so metric capture judges them like flat values.
func flattenV3(row map[string]any) map[string]any {
	if _, ok := object(row["request_metrics"]); !ok {
		return row
	}
	flat := make(map[string]any, len(row)+100)
	for k, v := range row {
		flat[k] = v
	}
	for bi, b := range v3Blocks {
		block, ok := object(at(row, b.path))
		if !ok {
			continue
		}
		for si, st := range v3Stats {
			if v, ok := block[st[0]]; ok {
				if _, numeric := numericValue(v); numeric {
					flat[v3Keys[bi][si]] = v
				}
			}
		}
	}
	for _, s := range v3Scalars {
		if v := at(row, s.path); v != nil {
			if _, numeric := numericValue(v); numeric {
				flat[s.key] = v
			}
		}
	}
	return flat
}

// at walks a path of nested objects.
func at(row map[string]any, path []string) any {
	var cur any = row
	for _, seg := range path {
		m, ok := object(cur)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	return cur
}

// preferFullResponse replaces canonical ITL / interactivity with the
// full-response values when any are present, so one row never mixes the two
// timing domains: every stat's itl/intvty is dropped and re-set from its
// full_response_itl (intvty = 1/itl) when that is a positive number, and
// std_itl/std_intvty come from std_full_response_itl/_intvty when present.
func preferFullResponse(metrics map[string]any) {
	has := false
	for _, st := range interactivityStats {
		if _, ok := metrics[st+"_full_response_itl"].(float64); ok {
			has = true
			break
		}
	}
	if !has {
		return
	}
	for _, st := range interactivityStats {
		delete(metrics, st+"_itl")
		delete(metrics, st+"_intvty")
		if itl, ok := metrics[st+"_full_response_itl"].(float64); ok && schema.Finite(itl) && itl > 0 {
			metrics[st+"_itl"] = itl
			metrics[st+"_intvty"] = 1 / itl
		}
	}
	delete(metrics, "std_itl")
	delete(metrics, "std_intvty")
	if v, ok := metrics["std_full_response_itl"].(float64); ok {
		metrics["std_itl"] = v
	}
	if v, ok := metrics["std_full_response_intvty"].(float64); ok {
		metrics["std_intvty"] = v
	}
}

// deriveInteractivity enforces intvty = 1/itl for every stat of an agentic
// row; an intvty without a positive itl is deleted. std is never inverted.
func deriveInteractivity(metrics map[string]any) {
	for _, st := range interactivityStats {
		if itl, ok := metrics[st+"_itl"].(float64); ok && itl > 0 {
			metrics[st+"_intvty"] = 1 / itl
		} else {
			delete(metrics, st+"_intvty")
		}
	}
}
