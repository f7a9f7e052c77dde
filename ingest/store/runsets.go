package store

import (
	"slices"

	"github.com/inferencex/ingest/schema"
)

// runSets collects, while rows are staged, the distinct configs and
// availability entries of the run's benchmark rows: a few dozen, written
// from Go-side arrays rather than by scanning the staging table (tens of
// megabytes on a large run) once for each.
type runSets struct {
	configs map[schema.Config]struct{}
	avail   map[availabilityKey]struct{}
}

// availabilityKey is an availability row but its date (the run's).
type availabilityKey struct {
	model, precision, hardware, framework, specMethod, benchmarkType string
	disagg                                                           bool
	isl, osl                                                         int32
	islSet, oslSet                                                   bool
}

func newRunSets() *runSets {
	return &runSets{configs: map[schema.Config]struct{}{}, avail: map[availabilityKey]struct{}{}}
}

// add notes a staged row's config and availability.
func (s *runSets) add(p *schema.BenchmarkPoint) {
	c := p.Config
	s.configs[c] = struct{}{}
	k := availabilityKey{model: c.Model, precision: c.Precision, hardware: c.Hardware, framework: c.Framework,
		specMethod: c.SpecMethod, benchmarkType: p.BenchmarkType, disagg: c.Disagg}
	if p.ISL != nil {
		k.isl, k.islSet = int32(*p.ISL), true
	}
	if p.OSL != nil {
		k.osl, k.oslSet = int32(*p.OSL), true
	}
	s.avail[k] = struct{}{}
}

// configArgs are the configs as the 17 arrays of qInsertConfigs, in a
// fixed order (new configs get their ids in it).
func (s *runSets) configArgs() []any {
	cs := make([]schema.Config, 0, len(s.configs))
	for c := range s.configs {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, schema.CompareConfigs)
	n := len(cs)
	hw, fw, model, prec, spec := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	disagg, multi, pDPA, dDPA := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	pTP, pEP, pW, dTP, dEP, dW, pGPU, dGPU := make([]int16, n), make([]int16, n), make([]int16, n), make([]int16, n),
		make([]int16, n), make([]int16, n), make([]int16, n), make([]int16, n)
	for i, c := range cs {
		hw[i], fw[i], model[i], prec[i], spec[i] = c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod
		disagg[i], multi[i], pDPA[i], dDPA[i] = c.Disagg, c.IsMultinode, c.PrefillDPAttention, c.DecodeDPAttention
		pTP[i], pEP[i], pW[i], dTP[i], dEP[i], dW[i], pGPU[i], dGPU[i] = int16(c.PrefillTP), int16(c.PrefillEP), int16(c.PrefillNumWorkers),
			int16(c.DecodeTP), int16(c.DecodeEP), int16(c.DecodeNumWorkers), int16(c.NumPrefillGPU), int16(c.NumDecodeGPU)
	}
	return []any{hw, fw, model, prec, spec, disagg, multi, pTP, pEP, pDPA, pW, dTP, dEP, dDPA, dW, pGPU, dGPU}
}

// availabilityArgs are the availability entries as the arrays of
// qInsertAvailability after its date.
func (s *runSets) availabilityArgs() []any {
	n := len(s.avail)
	model, isl, osl, prec, hw, fw, spec, disagg, typ := make([]string, 0, n), make([]*int32, 0, n), make([]*int32, 0, n),
		make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]bool, 0, n), make([]string, 0, n)
	for k := range s.avail {
		model, prec, hw, fw, spec, disagg, typ = append(model, k.model), append(prec, k.precision), append(hw, k.hardware),
			append(fw, k.framework), append(spec, k.specMethod), append(disagg, k.disagg), append(typ, k.benchmarkType)
		isl, osl = append(isl, optInt32(k.isl, k.islSet)), append(osl, optInt32(k.osl, k.oslSet))
	}
	return []any{model, isl, osl, prec, hw, fw, spec, disagg, typ}
}

func optInt32(v int32, set bool) *int32 {
	if !set {
		return nil
	}
	return &v
}
