package store

import (
	"cmp"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// runSets collects, while rows are staged, the distinct configs and
// availability entries of the run's benchmark rows: a few dozen, written
// from Go-side arrays rather than by scanning the staging table (tens of
// megabytes on a large run) once for each.
type runSets struct {
	configs map[stagedConfig]struct{}
	avail   map[availabilityKey]struct{}
}

// stagedConfig is a config as staged: its counts as smallint.
type stagedConfig struct {
	hardware, framework, model, precision, specMethod string
	disagg, multinode                                 bool
	prefillTP, prefillEP                              int16
	prefillDPA                                        bool
	prefillWorkers, decodeTP, decodeEP                int16
	decodeDPA                                         bool
	decodeWorkers, prefillGPU, decodeGPU              int16
}

// availabilityKey is an availability row but its date (the run's).
type availabilityKey struct {
	model, precision, hardware, framework, specMethod, benchmarkType string
	disagg                                                           bool
	isl, osl                                                         int32
	islSet, oslSet                                                   bool
}

func newRunSets() *runSets {
	return &runSets{configs: map[stagedConfig]struct{}{}, avail: map[availabilityKey]struct{}{}}
}

func stagedConfigOf(c schema.Config) stagedConfig {
	return stagedConfig{c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod, c.Disagg, c.IsMultinode,
		int16(c.PrefillTP), int16(c.PrefillEP), c.PrefillDPAttention, int16(c.PrefillNumWorkers),
		int16(c.DecodeTP), int16(c.DecodeEP), c.DecodeDPAttention, int16(c.DecodeNumWorkers),
		int16(c.NumPrefillGPU), int16(c.NumDecodeGPU)}
}

// add notes a staged row's config and availability.
func (s *runSets) add(p *schema.BenchmarkPoint) {
	c := p.Config
	s.configs[stagedConfigOf(c)] = struct{}{}
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
	cs := make([]stagedConfig, 0, len(s.configs))
	for c := range s.configs {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b stagedConfig) int {
		return cmp.Or(cmp.Compare(a.hardware, b.hardware), cmp.Compare(a.framework, b.framework),
			cmp.Compare(a.model, b.model), cmp.Compare(a.precision, b.precision), cmp.Compare(a.specMethod, b.specMethod),
			compareBool(a.disagg, b.disagg), compareBool(a.multinode, b.multinode),
			cmp.Compare(a.prefillTP, b.prefillTP), cmp.Compare(a.prefillEP, b.prefillEP), compareBool(a.prefillDPA, b.prefillDPA),
			cmp.Compare(a.prefillWorkers, b.prefillWorkers), cmp.Compare(a.decodeTP, b.decodeTP), cmp.Compare(a.decodeEP, b.decodeEP),
			compareBool(a.decodeDPA, b.decodeDPA), cmp.Compare(a.decodeWorkers, b.decodeWorkers),
			cmp.Compare(a.prefillGPU, b.prefillGPU), cmp.Compare(a.decodeGPU, b.decodeGPU))
	})
	n := len(cs)
	hw, fw, model, prec, spec := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	disagg, multi, pDPA, dDPA := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	pTP, pEP, pW, dTP, dEP, dW, pGPU, dGPU := make([]int16, n), make([]int16, n), make([]int16, n), make([]int16, n),
		make([]int16, n), make([]int16, n), make([]int16, n), make([]int16, n)
	for i, c := range cs {
		hw[i], fw[i], model[i], prec[i], spec[i] = c.hardware, c.framework, c.model, c.precision, c.specMethod
		disagg[i], multi[i], pDPA[i], dDPA[i] = c.disagg, c.multinode, c.prefillDPA, c.decodeDPA
		pTP[i], pEP[i], pW[i], dTP[i], dEP[i], dW[i], pGPU[i], dGPU[i] = c.prefillTP, c.prefillEP, c.prefillWorkers,
			c.decodeTP, c.decodeEP, c.decodeWorkers, c.prefillGPU, c.decodeGPU
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

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
