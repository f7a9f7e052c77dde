package benchmark

import (
	"fmt"
	"math"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/schema"
)

// maxSmallint is the largest value of a PostgreSQL smallint column; every
// topology column of configs is one.
const maxSmallint = math.MaxInt16

// topologyIntKeys are the integer fields that shape a deployment. Each must
// be absent, null or a non-negative integer (an integral number or a plain
// decimal string, catalog.IdentityInt) that fits a smallint.
// A fixed list, built once rather than per row.
var topologyIntKeys = [...]string{
	"tp", "ep", "pp", "pcp_size", "dcp_size",
	"prefill_tp", "prefill_ep", "prefill_pp", "prefill_pcp_size", "prefill_dcp_size", "prefill_num_workers",
	"decode_tp", "decode_ep", "decode_pp", "decode_pcp_size", "decode_dcp_size", "decode_num_workers",
	"num_gpus", "num_prefill_gpu", "num_decode_gpu", "num_aggregate_gpu",
}

// topology is the parsed deployment shape of one row.
type topology struct {
	row       map[string]any
	ints      map[string]int // present topology ints
	framework string
	fwDisagg  bool
	agentic   bool
	// marker is is_multinode when markerSet (an explicit boolean).
	marker, markerSet bool
}

// side is one role (prefill or decode) of a deployment.
type side struct {
	tp, ep, workers, gpus int
	dpAttn                bool
}

// parseTopologyInts validates the topology integers of a row.
func parseTopologyInts(row map[string]any) (map[string]int, error) {
	ints := map[string]int{} // a handful of the 21 keys as a rule: grown as found, not sized for all
	for _, key := range topologyIntKeys {
		v, ok := row[key]
		if !ok || v == nil {
			continue
		}
		n, isInt := catalog.IdentityInt(v)
		if !isInt || n < 0 {
			return nil, fmt.Errorf("%s: %s is not a non-negative integer", key, catalog.DescribeValue(v))
		}
		if n > maxSmallint {
			return nil, fmt.Errorf("%s: %s is out of range 0..%d", key, catalog.DescribeValue(v), maxSmallint)
		}
		ints[key] = int(n)
	}
	return ints, nil
}

// resolveTopology turns a row's parallelism fields into the topology part
// of its config (as the reference ingest's resolveConfigTopology does). framework is the
// canonical framework and fwDisagg the disaggregation flag it implies.
func resolveTopology(row map[string]any, framework string, fwDisagg, agentic bool) (schema.Config, error) {
	ints, err := parseTopologyInts(row)
	if err != nil {
		return schema.Config{}, err
	}
	t := topology{row: row, ints: ints, framework: framework, fwDisagg: fwDisagg, agentic: agentic}
	t.marker, t.markerSet = catalog.ParseOptionalBool(row["is_multinode"])

	var prefill, decode side
	if _, roleShaped := row["prefill_tp"]; roleShaped && !t.mirroredAggregate() {
		prefill, decode = t.roleShaped()
	} else {
		prefill, decode = t.flat()
	}

	// Node placement alone never implies separate prefill/decode engines.
	disagg := fwDisagg || decode.workers > 0
	if !disagg {
		agg := decode
		if decode.tp <= 0 || decode.ep <= 0 ||
			(decode.workers <= 0 && decode.gpus <= 0 && (prefill.workers > 0 || prefill.gpus > 0)) {
			agg = prefill
		}
		prefill, decode = agg, agg
	}

	cfg := schema.Config{
		Disagg:             disagg,
		IsMultinode:        t.markerSet && t.marker,
		PrefillTP:          prefill.tp,
		PrefillEP:          prefill.ep,
		PrefillDPAttention: prefill.dpAttn,
		PrefillNumWorkers:  prefill.workers,
		DecodeTP:           decode.tp,
		DecodeEP:           decode.ep,
		DecodeDPAttention:  decode.dpAttn,
		DecodeNumWorkers:   decode.workers,
		NumPrefillGPU:      prefill.gpus,
		NumDecodeGPU:       decode.gpus,
	}
	return cfg, checkConfigRanges(cfg)
}

// checkConfigRanges enforces the smallint columns and tp >= 1.
func checkConfigRanges(c schema.Config) error {
	fields := []struct {
		name  string
		value int
		min   int
	}{
		{"prefill_tp", c.PrefillTP, 1}, {"prefill_ep", c.PrefillEP, 0},
		{"prefill_num_workers", c.PrefillNumWorkers, 0},
		{"decode_tp", c.DecodeTP, 1}, {"decode_ep", c.DecodeEP, 0},
		{"decode_num_workers", c.DecodeNumWorkers, 0},
		{"num_prefill_gpu", c.NumPrefillGPU, 0}, {"num_decode_gpu", c.NumDecodeGPU, 0},
	}
	for _, f := range fields {
		if f.value < f.min || f.value > maxSmallint {
			return fmt.Errorf("%s: %d is out of range %d..%d", f.name, f.value, f.min, maxSmallint)
		}
	}
	return nil
}

// intOr returns the parsed topology int key, or def when absent.
func (t *topology) intOr(key string, def int) int {
	if v, ok := t.ints[key]; ok {
		return v
	}
	return def
}

// physicalChipCount is a positive count, or nothing.
func (t *topology) physicalChipCount(key string) (int, bool) {
	v, ok := t.ints[key]
	return v, ok && v > 0
}

// roleChipCount is a non-negative count (0 is a real answer for a role).
func (t *topology) roleChipCount(key string) (int, bool) {
	v, ok := t.ints[key]
	return v, ok
}

// gpuCount is the GPU count of one engine of a role (prefix "prefill_",
// "decode_" or "" for flat rows). It is the producer's own physical count,
// tp × pp × pcp_size (docs/formats.md, benchmark rows): DCP and EP share the TP
// devices. (The reference ingest multiplied tp × ep for most rows, which
// stores 64 GPUs for an 8-GPU tp8/ep8 deployment; we do not repeat that.)
func (t *topology) gpuCount(tp, _ int, prefix string) int {
	pp, pcp := 1, 1
	if v, ok := t.ints[prefix+"pp"]; ok && v > 0 {
		pp = v
	}
	if v, ok := t.ints[prefix+"pcp_size"]; ok && v > 0 {
		pcp = v
	}
	return tp * pp * pcp
}

// mirroredAggregate: a single-node SGLang 1P/1D payload whose roles mirror
// the flat fields is one engine (the eval producer's encoding).
func (t *topology) mirroredAggregate() bool {
	if !t.markerSet || t.marker || t.framework != "sglang" || t.fwDisagg {
		return false
	}
	if w, ok := t.ints["prefill_num_workers"]; !ok || w != 1 {
		return false
	}
	if w, ok := t.ints["decode_num_workers"]; !ok || w != 1 {
		return false
	}
	for _, key := range []string{"tp", "ep", "pp", "pcp_size"} {
		flat := t.intOr(key, 1)
		if t.intOr("prefill_"+key, 1) != flat || t.intOr("decode_"+key, 1) != flat {
			return false
		}
	}
	dp := parseBool(t.row["dp_attention"])
	return parseBool(t.row["prefill_dp_attention"]) == dp && parseBool(t.row["decode_dp_attention"]) == dp
}

// roleShaped reads v2 prefill_*/decode_* fields.
func (t *topology) roleShaped() (prefill, decode side) {
	decodeWorkersRaw := t.intOr("decode_num_workers", 0)
	role := func(prefix, countKey string) side {
		s := side{
			tp:      t.intOr(prefix+"tp", 1),
			ep:      t.intOr(prefix+"ep", 1),
			dpAttn:  parseBool(t.row[prefix+"dp_attention"]),
			workers: t.intOr(prefix+"num_workers", 0),
		}
		if n, ok := t.roleChipCount(countKey); ok {
			s.gpus = n
			return s
		}
		if !t.fwDisagg && decodeWorkersRaw <= 0 {
			if n, ok := t.physicalChipCount("num_gpus"); ok {
				s.gpus = n
				return s
			}
		}
		s.gpus = t.gpuCount(s.tp, s.ep, prefix) * max(s.workers, 1)
		return s
	}
	return role("prefill_", "num_prefill_gpu"), role("decode_", "num_decode_gpu")
}

// flat reads v1 tp/ep/dp_attention, mirrored into both roles.
func (t *topology) flat() (prefill, decode side) {
	s := side{
		tp:     t.intOr("tp", 1),
		ep:     t.intOr("ep", 1),
		dpAttn: parseBool(t.row["dp_attention"]),
	}
	count := func(key string) int {
		if n, ok := t.roleChipCount(key); ok {
			return n
		}
		if n, ok := t.physicalChipCount("num_gpus"); ok {
			return n
		}
		return t.gpuCount(s.tp, s.ep, "")
	}
	prefill, decode = s, s
	prefill.gpus = count("num_prefill_gpu")
	decode.gpus = count("num_decode_gpu")
	return prefill, decode
}
