package eval

import (
	"fmt"
	"sort"

	"github.com/inferencex/ingest/ingest/catalog"
)

// topologyIntKeys are the integer deployment fields of a meta_env.json or
// aggregate row; present, each must be a non-negative integer (a bare
// number or a numeric string), else the deployment cannot be trusted.
var topologyIntKeys = []string{
	"tp", "ep", "pp", "dcp_size", "pcp_size", "num_gpus",
	"prefill_tp", "prefill_ep", "prefill_pp", "prefill_dcp_size", "prefill_pcp_size", "prefill_num_workers",
	"decode_tp", "decode_ep", "decode_pp", "decode_dcp_size", "decode_pcp_size", "decode_num_workers",
	"num_prefill_gpu", "num_decode_gpu",
}

// metaBoolKeys are the boolean fields of a meta_env.json (JSON booleans;
// "true"/"false" strings are accepted).
var metaBoolKeys = []string{"is_multinode", "disagg", "dp_attention", "prefill_dp_attention", "decode_dp_attention"}

// badTopology names the first integer topology field that is present but
// not a non-negative integer, or "".
func badTopology(src map[string]any) string {
	for _, k := range topologyIntKeys {
		v, ok := src[k]
		if !ok || v == nil {
			continue
		}
		if n, ok := intValue(v); !ok || n < 0 {
			return k + ": " + catalog.DescribeValue(v) + " is not a non-negative integer"
		}
	}
	return ""
}

// checkMeta reports the first field of a meta_env.json of the wrong type:
// a topology field, a boolean, conc, or the batched concurrency lists.
func checkMeta(meta map[string]any) string {
	if bad := badTopology(meta); bad != "" {
		return bad
	}
	for _, k := range metaBoolKeys {
		if v, ok := meta[k]; ok && v != nil {
			if _, ok := catalog.ParseOptionalBool(v); !ok {
				return k + ": " + catalog.DescribeValue(v) + " is not a boolean"
			}
		}
	}
	if v, ok := meta["conc"]; ok && v != nil {
		if n, ok := intValue(v); !ok || n < 0 {
			return "conc: " + catalog.DescribeValue(v) + " is not a non-negative integer"
		}
	}
	for _, k := range []string{"eval_concs", "completed_eval_concs", "failed_eval_concs"} {
		if _, bad := concList(meta, k); bad != "" {
			return bad
		}
	}
	return ""
}

// concList reads a batched concurrency list (eval_concs and friends): absent or null is nil;
// anything but a JSON array of positive integers is a bad field.
func concList(meta map[string]any, key string) (map[int]bool, string) {
	v, ok := meta[key]
	if !ok || v == nil {
		return nil, ""
	}
	list, ok := v.([]any)
	if !ok {
		return nil, key + ": " + catalog.DescribeValue(v) + " is not a list of concurrencies"
	}
	out := make(map[int]bool, len(list))
	for _, x := range list {
		c, ok := intValue(x)
		if !ok || c <= 0 {
			return nil, key + ": " + catalog.DescribeValue(x) + " is not a positive integer"
		}
		out[c] = true
	}
	return out, ""
}

// completedConcs is the set of concurrencies of a batched eval whose
// results may become rows: completed_eval_concs (else, from an older
// writer without the list, every one of eval_concs), less any listed in
// failed_eval_concs. A concurrency listed both completed and failed is a
// contradiction the artifact fails on.
func completedConcs(meta map[string]any) (map[int]bool, string) {
	concs, _ := concList(meta, "eval_concs")
	completed, _ := concList(meta, "completed_eval_concs")
	failed, _ := concList(meta, "failed_eval_concs")
	if _, listed := meta["completed_eval_concs"]; !listed || meta["completed_eval_concs"] == nil {
		completed = map[int]bool{}
		for c := range concs {
			if !failed[c] {
				completed[c] = true
			}
		}
	}
	var both []int
	for c := range completed {
		if failed[c] {
			both = append(both, c)
		}
	}
	if len(both) > 0 {
		sort.Ints(both)
		return nil, fmt.Sprintf("concurrency %d is listed in both completed_eval_concs and failed_eval_concs", both[0])
	}
	return completed, ""
}
