package eval

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/schema"
)

// Row is one eval_results row as read from an artifact, before its
// deployment is resolved to a config.
type Row struct {
	// Identity is the deployment as a raw benchmark-shaped row (hw, model,
	// framework, precision, spec_decoding, is_multinode, disagg, flat tp/ep
	// or prefill_*/decode_* fields), for benchmark.Normalizer.ResolveConfig.
	Identity map[string]any
	// Agentic selects the AgentX topology rules (isl = osl = 0 evals).
	Agentic bool
	// Task is lower-case and never empty.
	Task          string
	ISL, OSL      *int
	Conc          *int
	LMEvalVersion *string
	// Metrics hold float64 values and the string score_name.
	Metrics map[string]any
	// File and Index name where the row came from: the results file and the
	// task's position in it, or the aggregate file and the array index.
	File  string
	Index int
	// SamplesFile is the samples_<task>_*.jsonl of this row, when its
	// per-config directory has one.
	SamplesFile string
	// SkipReason is set for rows read but deliberately not written.
	SkipReason string
	// Decoding is how the task's model decoded (per-config results files;
	// unknown for aggregate rows).
	Decoding Decoding `json:"-"`
}

// Skip reasons of rows that are read but not written.
const (
	// SkipConcNotCompleted: a batched result of a concurrency not listed in
	// completed_eval_concs.
	SkipConcNotCompleted = "concurrency not completed"
	// SkipSuperseded: an older results file of the same eval (a newer one
	// for the same concurrency was chosen).
	SkipSuperseded = "superseded by a newer results file"
	// SkipNoMetrics: a task whose results hold no numeric metric.
	SkipNoMetrics = "task has no metrics"
)

// intValue reads an identity integer: an integral JSON number or a plain
// decimal string (catalog.IdentityInt).
func intValue(v any) (int, bool) {
	n, ok := catalog.IdentityInt(v)
	if !ok || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, false
	}
	return int(n), true
}

// floatValue reads a finite JSON number (strings are not metrics).
func floatValue(v any) (float64, bool) {
	var f float64
	switch t := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(t.String(), 64)
		if err != nil {
			return 0, false
		}
		f = x
	case float64:
		f = t
	case int:
		f = float64(t)
	default:
		return 0, false
	}
	return f, schema.Finite(f)
}

// optPositive is v when it is positive, else nil (0 is the AgentX
// "no sequence length" sentinel).
func optPositive(v int) *int {
	if v <= 0 {
		return nil
	}
	return &v
}

// sequence settles isl/osl: explicit values (0 meaning none), else the
// "…_8k1k_…" token of a name. It reports a bad explicit value.
func sequence(islRaw, oslRaw any, names ...string) (isl, osl *int, agentic bool, bad string) {
	if islRaw != nil || oslRaw != nil {
		i, okI := intValue(islRaw)
		o, okO := intValue(oslRaw)
		if !okI || !okO || i < 0 || o < 0 {
			return nil, nil, false, "isl/osl: " + catalog.DescribeValue(islRaw) + "/" + catalog.DescribeValue(oslRaw) + " are not non-negative integers"
		}
		return optPositive(i), optPositive(o), i == 0 && o == 0, ""
	}
	for _, n := range names {
		if i, o, ok := nameSequence(n); ok {
			return &i, &o, false, ""
		}
	}
	return nil, nil, false, ""
}

// identityKeys are the fields of a meta_env.json or aggregate row that name
// the deployment; they are copied into Row.Identity as they are.
var identityKeys = []string{
	"hw", "model", "framework", "precision", "spec_decoding", "disagg", "is_multinode", "num_gpus",
	"tp", "ep", "pp", "dcp_size", "pcp_size", "dp_attention",
	"prefill_tp", "prefill_ep", "prefill_pp", "prefill_dcp_size", "prefill_pcp_size", "prefill_dp_attention", "prefill_num_workers",
	"decode_tp", "decode_ep", "decode_pp", "decode_dcp_size", "decode_pcp_size", "decode_dp_attention", "decode_num_workers",
	"num_prefill_gpu", "num_decode_gpu",
}

// roleKeys are the per-role fields: multinode deployments only. A
// single-node eval is one engine, described like a single-node benchmark
// row (flat tp/ep), whatever mirrored role fields its metadata carries.
func isRoleKey(k string) bool {
	return strings.HasPrefix(k, "prefill_") || strings.HasPrefix(k, "decode_") ||
		k == "num_prefill_gpu" || k == "num_decode_gpu"
}

// identity builds the benchmark-shaped deployment row from an eval source
// (meta_env.json or an aggregate row): single-node evals get the flat
// fields a single-node benchmark row has, multinode ones the role fields;
// topology stated by the artifact or file name wins; a missing disagg is
// what the benchmark producer writes (false for single node, decode
// workers > 0 for multinode).
func identity(src map[string]any, prefix any, names ...string) map[string]any {
	out := make(map[string]any, len(identityKeys)+1)
	multinode, _ := catalog.ParseOptionalBool(src["is_multinode"])
	for _, k := range identityKeys {
		v, ok := src[k]
		if !ok || v == nil {
			continue
		}
		if !multinode && isRoleKey(k) {
			continue
		}
		if multinode && (k == "tp" || k == "ep" || k == "pp" || k == "dcp_size" || k == "pcp_size" || k == "dp_attention") {
			continue // they mirror the prefill side
		}
		out[k] = v
	}
	out["infmax_model_prefix"] = prefix
	out["is_multinode"] = multinode
	for _, n := range names {
		t := nameTopology(n)
		if t == nil {
			continue
		}
		_, roles := t["prefill_tp"]
		if roles != multinode {
			continue
		}
		for k, v := range t {
			out[k] = v
		}
		break
	}
	if _, ok := out["disagg"]; !ok {
		if multinode {
			w, _ := intValue(out["decode_num_workers"])
			out["disagg"] = w > 0
		} else {
			out["disagg"] = false
		}
	}
	return out
}
