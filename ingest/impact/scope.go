package impact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// describe fills the curve's naming fields from its benchmark_curve_scope
// (schema.CurveScope) and its Key.
func describe(c *schema.CurveChange, scope string) error {
	var sc schema.CurveScope
	if err := json.Unmarshal([]byte(scope), &sc); err != nil {
		return err
	}
	c.Model, c.Hardware, c.Framework, c.Precision, c.BenchmarkType = sc.Model, sc.Hardware, sc.Framework, sc.Precision, sc.BenchmarkType
	c.ISL, c.OSL, c.SpecMethod, c.Disagg, c.OffloadMode = sc.ISL, sc.OSL, sc.SpecMethod, sc.Disagg, sc.OffloadMode
	c.Key = curveKey(c)
	return nil
}

// curveKey is model/hardware/framework/precision/sequence, then for a
// fixed-sequence curve spec method, agg|disagg and offload mode: every
// field of the scope, so keys are unique.
func curveKey(c *schema.CurveChange) string {
	parts := []string{c.Model, c.Hardware, c.Framework, c.Precision}
	seq := "agentic"
	if c.BenchmarkType != schema.BenchmarkAgenticTraces {
		seq = c.BenchmarkType
	}
	if c.ISL != nil && c.OSL != nil {
		seq = fmt.Sprintf("%dx%d", *c.ISL, *c.OSL)
		if c.BenchmarkType == schema.BenchmarkAgenticTraces {
			seq = "agentic-" + seq
		}
	}
	parts = append(parts, seq)
	if c.BenchmarkType != schema.BenchmarkAgenticTraces {
		mode := "agg"
		if c.Disagg {
			mode = "disagg"
		}
		parts = append(parts, c.SpecMethod, mode, c.OffloadMode)
	}
	return strings.Join(parts, "/")
}

// arm names a point's variant within its curve: its topology (TP, EP, DP
// attention, workers for a disaggregated config), its spec method and
// disagg where the curve does not fix them (AgentX), and its offload mode
// unless off.
func arm(c *schema.CurveChange, p schema.CurvePoint) string {
	cf := p.Config
	side := func(tp, ep int, dpa bool) string {
		s := fmt.Sprintf("tp%d", tp)
		if ep > 1 {
			s += fmt.Sprintf("ep%d", ep)
		}
		if dpa {
			s += "-dpa"
		}
		return s
	}
	var s string
	if cf.Disagg {
		s = fmt.Sprintf("P%dx%s/D%dx%s", cf.PrefillNumWorkers, side(cf.PrefillTP, cf.PrefillEP, cf.PrefillDPAttention),
			cf.DecodeNumWorkers, side(cf.DecodeTP, cf.DecodeEP, cf.DecodeDPAttention))
	} else {
		s = side(cf.DecodeTP, cf.DecodeEP, cf.DecodeDPAttention)
	}
	if c.BenchmarkType == schema.BenchmarkAgenticTraces && cf.SpecMethod != "" && cf.SpecMethod != "none" {
		s += " " + cf.SpecMethod
	}
	if p.OffloadMode != "" && p.OffloadMode != "off" {
		s += " offload"
	}
	return s
}
