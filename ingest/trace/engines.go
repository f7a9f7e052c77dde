package trace

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// scrapeScalars are the server-wide values of one point's scrape.
type scrapeScalars struct {
	gpuHit, cpuHit, externalHit optional
	kvUsage                     optional
	prompt, generation          optional
}

// roleTopology is one role's config: its TP, attention DP, and the worker
// count a disaggregated role pins (0: not pinned).
type roleTopology struct {
	tp          int
	dpAttention bool
	workers     int
}

// poolInput is what a role's KV-cache pool is computed from: the startup
// lines of each of its workers (one worker's hosts merged) and the scrape
// series of its endpoints.
type poolInput struct {
	workers  [][]string
	scrape   Scrape
	topology roleTopology
}

// engine is one inference server: how its scrape reads, and its KV-cache
// pool in tokens (or why that is unknown).
type engine struct {
	scalars func(Scrape) scrapeScalars
	pool    func(poolInput) (int64, string)
	// needsLog: the pool comes from worker logs, so a point without a
	// stored server log has none.
	needsLog bool
}

// engines maps a canonical framework to its server.
var engines = map[string]engine{
	"vllm":          vllmEngine,
	"tilert":        vllmEngine,
	"dynamo-vllm":   vllmEngine,
	"sglang":        sglangEngine,
	"dynamo-sglang": sglangEngine,
	"mori-sglang":   sglangEngine,
	"trt":           trtllmEngine,
	"dynamo-trt":    trtllmEngine,
	"atom":          atomEngine,
	"mooncake-atom": atomEngine,
}

// sumWorkerPools adds each worker's pool after checking that every worker
// the role pins logged one.
func sumWorkerPools(in poolInput, worker func([]string) (int64, string)) (int64, string) {
	if len(in.workers) == 0 {
		return 0, "no worker log"
	}
	if in.topology.workers > 0 && len(in.workers) != in.topology.workers {
		return 0, fmt.Sprintf("%d of %d worker logs", len(in.workers), in.topology.workers)
	}
	var total int64
	for _, lines := range in.workers {
		n, why := worker(lines)
		if why != "" {
			return 0, why
		}
		total += n
	}
	return total, ""
}

var (
	vllmKVSize    = regexp.MustCompile(`GPU KV cache size:\s*([\d,]+)\s*tokens`)
	vllmEngineTag = regexp.MustCompile(`\((EngineCore(?:_DP\d+)?)\s+pid=\d+\)`)
	vllmDPSize    = regexp.MustCompile(`\bdata_parallel_size=(\d+)`)
)

var vllmEngine = engine{needsLog: true,
	scalars: func(s Scrape) scrapeScalars {
		gpu := ratio(s.sum("vllm:prefix_cache_hits"), s.sum("vllm:prefix_cache_queries"))
		ext := ratio(s.sum("vllm:external_prefix_cache_hits"), s.sum("vllm:external_prefix_cache_queries"))
		// Token-source counters split local hits from external loads.
		by := s.sumByLabel("vllm:prompt_tokens_by_source", "source")
		var total float64
		for _, v := range by {
			total += v
		}
		if total > 0 {
			if v, ok := by["local_cache_hit"]; ok {
				gpu = some(v / total)
			}
			if v, ok := by["external_kv_transfer"]; ok {
				ext = some(v / total)
			}
		}
		return scrapeScalars{gpuHit: gpu, cpuHit: ext, externalHit: ext,
			kvUsage: fraction(s.gaugeMax("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")),
			prompt:  s.sum("vllm:prompt_tokens"), generation: s.sum("vllm:generation_tokens")}
	},
	// One "GPU KV cache size" line per engine core (DP rank), TP folded in.
	pool: func(in poolInput) (int64, string) {
		return sumWorkerPools(in, func(lines []string) (int64, string) {
			perEngine := map[string]int64{}
			dp := int64(1)
			for _, l := range lines {
				if m := vllmDPSize.FindStringSubmatch(l); m != nil {
					dp = max(dp, atoi(m[1]))
				}
				m := vllmKVSize.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				tag := "EngineCore"
				if t := vllmEngineTag.FindStringSubmatch(l); t != nil {
					tag = t[1]
				}
				perEngine[tag] = atoi(strings.ReplaceAll(m[1], ",", ""))
			}
			if len(perEngine) == 0 {
				return 0, "no GPU KV cache size line"
			}
			if dp > 1 && int64(len(perEngine)) != dp {
				return 0, fmt.Sprintf("%d of %d DP engine cores logged", len(perEngine), dp)
			}
			return sumValues(perEngine), ""
		})
	},
}

var (
	sglangMaxTokens = regexp.MustCompile(`\bmax_total_num_tokens=(\d+)`)
	sglangDPTag     = regexp.MustCompile(`\bDP(\d+)\b`)
	sglangDPSize    = regexp.MustCompile(`\bdp_size=(\d+)`)
)

var sglangEngine = engine{needsLog: true,
	scalars: func(s Scrape) scrapeScalars {
		prompt := s.sum("sglang:prompt_tokens")
		cached := s.sumByLabel("sglang:cached_tokens", "cache_source")
		label := func(k string) optional {
			v, ok := cached[k]
			return optional{v, ok}
		}
		host := ratio(label("host"), prompt) // HiCache host hits: the CPU tier
		return scrapeScalars{gpuHit: ratio(label("device"), prompt), cpuHit: host, externalHit: host,
			kvUsage: fraction(s.gaugeMax("sglang:token_usage")), prompt: prompt, generation: s.sum("sglang:generation_tokens")}
	},
	// max_total_num_tokens is one DP rank's pool, shared by its TP ranks;
	// a single logged rank stands for all dp_size ranks.
	pool: func(in poolInput) (int64, string) {
		return sumWorkerPools(in, func(lines []string) (int64, string) {
			perRank := map[string]int64{}
			dp := int64(1)
			for _, l := range lines {
				if m := sglangDPSize.FindStringSubmatch(l); m != nil {
					dp = max(dp, atoi(m[1]))
				}
				loc := sglangMaxTokens.FindStringSubmatchIndex(l)
				if loc == nil {
					continue
				}
				rank := "0"
				if t := sglangDPTag.FindStringSubmatch(l[:loc[0]]); t != nil {
					rank = t[1]
				}
				perRank[rank] = atoi(l[loc[2]:loc[3]])
			}
			switch {
			case len(perRank) == 0:
				return 0, "no max_total_num_tokens line"
			case len(perRank) == 1:
				return sumValues(perRank) * dp, ""
			case int64(len(perRank)) != dp:
				return 0, fmt.Sprintf("%d of %d DP ranks logged", len(perRank), dp)
			}
			return sumValues(perRank), ""
		})
	},
}

var trtllmEngine = engine{
	scalars: func(s Scrape) scrapeScalars {
		prompt := s.sum("trtllm_prompt_tokens_total")
		return scrapeScalars{
			gpuHit:  fraction(s.gaugeMean("trtllm_kv_cache_hit_rate")).or(ratio(s.sum("trtllm_prompt_cached_tokens_total"), prompt)),
			kvUsage: fraction(s.gaugeMax("trtllm_kv_cache_utilization")),
			prompt:  prompt, generation: s.sum("trtllm_generation_tokens_total")}
	},
	// Capacity comes from each worker endpoint's exported blocks; under
	// attention DP the exporter reports rank 0's pool only.
	pool: func(in poolInput) (int64, string) {
		if in.topology.dpAttention {
			return 0, "attention-DP exports rank 0 capacity only"
		}
		perBlock := map[string]float64{}
		for _, s := range in.scrape["trtllm_kv_cache_tokens_per_block"] {
			if v, ok := s.Stats["max"]; ok {
				perBlock[s.Endpoint] = v
			}
		}
		blocks := map[string]float64{}
		var order []string
		for _, s := range in.scrape["trtllm_kv_cache_max_blocks"] {
			v, ok := s.Stats["max"]
			if !ok {
				continue
			}
			if _, seen := blocks[s.Endpoint]; !seen {
				order = append(order, s.Endpoint)
			}
			blocks[s.Endpoint] = max(blocks[s.Endpoint], v)
		}
		if len(blocks) == 0 {
			return 0, "no trtllm_kv_cache_max_blocks series"
		}
		if in.topology.workers > 0 && len(blocks) != in.topology.workers {
			return 0, fmt.Sprintf("%d of %d worker endpoints scraped", len(blocks), in.topology.workers)
		}
		var total float64
		for _, ep := range order {
			pb, ok := perBlock[ep]
			if !ok {
				return 0, "missing tokens per block"
			}
			total += blocks[ep] * pb
		}
		return int64(total), ""
	},
}

func atomNames(stem string) []string {
	return []string{"atom:" + stem, "atom_" + stem, "atom:" + stem + "_total", "atom_" + stem + "_total"}
}

var (
	atomBlockSize = regexp.MustCompile(`\bblock_size=(\d+)[,)]`)
	atomDCP       = regexp.MustCompile(`\bdcp=(\d+)[ ,)]`)
)

var atomEngine = engine{needsLog: true,
	scalars: func(s Scrape) scrapeScalars {
		full := s.sum(atomNames("prefix_cache_full_tokens")...)
		// The admitted cache counter can already include an LMCache load.
		ext := ratio(s.sum(atomNames("lmcache_loaded_tokens")...), full)
		return scrapeScalars{gpuHit: ratio(s.sum(atomNames("prefix_cache_cached_tokens")...), full), cpuHit: ext, externalHit: ext,
			kvUsage: fraction(s.gaugeMax("atom:kv_cache_usage_ratio", "atom_kv_cache_usage_ratio")),
			prompt:  s.sum(atomNames("prompt_tokens")...), generation: s.sum(atomNames("generation_tokens")...)}
	},
	// The exported allocated-block gauge is the pool (DP pools summed),
	// scaled by the resolved block size × DCP width of the startup lines;
	// logs and endpoints cannot be paired per worker, so one worker only.
	pool: func(in poolInput) (int64, string) {
		if len(in.workers) != 1 {
			return 0, fmt.Sprintf("%d worker logs; one is required", len(in.workers))
		}
		blocks := map[float64]bool{}
		for _, s := range in.scrape["atom:kv_cache_blocks_total"] {
			blocks[s.Stats["min"]] = true
			blocks[s.Stats["max"]] = true
		}
		delete(blocks, 0)
		if len(blocks) != 1 {
			return 0, "no constant allocated block count"
		}
		scale := int64(0)
		for _, l := range in.workers[0] {
			if !strings.Contains(l, "Concurrent capacity vs context length") {
				continue
			}
			bs := atomBlockSize.FindStringSubmatch(l)
			dcp := atomDCP.FindStringSubmatch(l)
			if bs == nil || (strings.Contains(l, "dcp=") && dcp == nil) {
				return 0, "no consistent block size"
			}
			next := atoi(bs[1])
			if dcp != nil {
				next *= atoi(dcp[1])
			}
			if next <= 0 || (scale != 0 && scale != next) {
				return 0, "no consistent block size"
			}
			scale = next
		}
		if scale == 0 {
			return 0, "no consistent block size"
		}
		return int64(slices.Collect(maps.Keys(blocks))[0]) * scale, ""
	},
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func sumValues(m map[string]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}
