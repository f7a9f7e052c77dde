package impact

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// sweepArm is one arm of a simulated sweep: a config and its concurrencies.
type sweepArm struct {
	config int64
	cf     schema.Config
	concs  []int
}

// sweep is a curve's shape: its scope and arms.
type sweep struct {
	name  string
	scope string
	arms  []sweepArm
	// noise is each value's relative noise: uniform within ±noise, so two
	// re-runs differ by up to (1+noise)/(1-noise), the generator's worst
	// pairs (toleranceOf).
	noise tolerance
}

func flatArm(id int64, tp int, concs ...int) sweepArm {
	return sweepArm{config: id, cf: schema.Config{DecodeTP: tp, DecodeEP: 1, PrefillTP: tp, PrefillEP: 1}, concs: concs}
}

func sweeps() []sweep {
	disagg := schema.Config{Disagg: true, PrefillNumWorkers: 1, PrefillTP: 4, PrefillEP: 1, DecodeNumWorkers: 2, DecodeTP: 8, DecodeEP: 8}
	agentic := flatArm(31, 8, 1, 4, 8, 16, 32, 64)
	agentic.cf.SpecMethod = "mtp"
	return []sweep{
		{name: "fixed-seq", scope: `["dsr1","b200","sglang","fp8","single_turn",1024,1024,"none",false,"off"]`,
			arms: []sweepArm{flatArm(11, 8, 4, 8, 16, 32, 64, 128), flatArm(12, 4, 4, 8, 16, 32)}, noise: tolerance{tput: 0.08, intvty: 0.08, e2el: 0.08}},
		{name: "multinode", scope: `["dsr1","gb200","dynamo-sglang","fp8","single_turn",8192,1024,"none",true,"off"]`,
			arms: []sweepArm{{config: 21, cf: disagg, concs: []int{64, 128, 256, 512}}}, noise: tolerance{tput: 0.08, intvty: 0.08, e2el: 0.08}},
		{name: "agentx", scope: `["qwen3.5","b200","sglang","fp8","agentic_traces",null,null,"",false,""]`,
			arms: []sweepArm{agentic, flatArm(32, 4, 1, 2, 4, 8)}, noise: tolerance{tput: 0.29, intvty: 0.085, e2el: 0.16}},
	}
}

// measure is one run of the sweep's points (keep: which to measure; nil:
// all) by GitHub run, rows numbered from firstID, values jittered by rng.
func (s sweep) measure(rng *rand.Rand, firstID int64, run int64, keep func(arm, i int) bool) []schema.CurvePoint {
	var out []schema.CurvePoint
	jitter := func(pct float64) float64 {
		if rng == nil {
			return 1
		}
		return 1 + (2*rng.Float64()-1)*pct
	}
	for a, arm := range s.arms {
		gpus := float64(arm.cf.DecodeTP)
		for i, conc := range arm.concs {
			if keep != nil && !keep(a, i) {
				continue
			}
			c := float64(conc)
			tpot := 7.5*math.Sqrt(8/gpus) + 2*c/gpus
			tput := 900 * c / gpus / tpot * jitter(s.noise.tput)
			intvty, e2el := 1000/tpot*jitter(s.noise.intvty), tpot*jitter(s.noise.e2el)
			fp := "recipe"
			out = append(out, schema.CurvePoint{ResultID: firstID + int64(len(out)), ConfigID: arm.config, Conc: conc,
				GitHubRunID: run, RunAttempt: 1, RecipeFingerprint: &fp, OffloadMode: "off", Config: arm.cf,
				Values: schema.PointValues{TputPerGPU: &tput, MedianIntvty: &intvty, P90E2EL: &e2el}})
		}
	}
	return out
}

func lossOf(t *testing.T, scope string, before, after []schema.CurvePoint) []string {
	t.Helper()
	c, err := curve(schema.CurveImpact{Scope: scope, Before: before, After: after})
	require.NoError(t, err)
	return c.CoverageLoss
}

// TestCoverageRerunsAreNotLosses: 20 re-runs of every sweep shape, each
// with other noise and other rows (and recipe), lose nothing.
func TestCoverageRerunsAreNotLosses(t *testing.T) {
	for _, s := range sweeps() {
		t.Run(s.name, func(t *testing.T) {
			before := s.measure(rand.New(rand.NewPCG(1, 0)), 1, 100, nil)
			for seed := uint64(2); seed <= 21; seed++ {
				after := s.measure(rand.New(rand.NewPCG(seed, 0)), int64(seed)*1000, int64(seed), nil)
				for i := range after {
					fp := "other recipe"
					after[i].RecipeFingerprint = &fp
				}
				require.Empty(t, lossOf(t, s.scope, before, after), "re-run %d", seed)
			}
		})
	}
}

// TestCoverageLosses: what a reader loses is flagged, what a run keeps or
// adds is not.
func TestCoverageLosses(t *testing.T) {
	s := sweeps()[0] // tp8 at 4–128, tp4 at 4–32
	noisy := func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }
	before := s.measure(noisy(1), 1, 100, nil)
	tests := []struct {
		name  string
		after []schema.CurvePoint
		want  []string // substrings of the loss lines; none: no loss
	}{
		{"half the concurrencies", s.measure(noisy(2), 1000, 200, func(a, i int) bool { return i < len(s.arms[a].concs)/2 }),
			[]string{"5 points no longer shown", "narrower concurrency span: 4–128 → 4–16", "interactivity range", "interactivity frontier"}},
		{"top end of tp8 dropped", s.measure(noisy(3), 1000, 200, func(a, i int) bool { return a == 1 || i < 4 }),
			[]string{"2 points no longer shown, with no re-measurement at the same concurrency and arm: conc 64 tp8, conc 128 tp8",
				"narrower concurrency span: 4–128 → 4–32", "interactivity frontier"}},
		{"an arm dropped", s.measure(noisy(4), 1000, 200, func(a, _ int) bool { return a == 0 }),
			[]string{"4 points no longer shown", "fewer arms: 2 → 1 (no longer shown: tp4)"}},
		{"append-only: every point kept, two added", append(append([]schema.CurvePoint{}, before...),
			s.measure(noisy(5), 1000, 200, func(a, i int) bool { return a == 1 && i >= 2 })...), nil},
		{"add-only: every point kept, a new arm", append(append([]schema.CurvePoint{}, before...),
			sweeps()[1].measure(noisy(6), 1000, 200, nil)...), nil},
		{"re-measured at half the throughput", halve(s.measure(noisy(7), 1000, 200, nil)), []string{"frontier"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lossOf(t, s.scope, before, tt.after)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			joined := strings.Join(got, "\n")
			for _, w := range tt.want {
				require.Contains(t, joined, w)
			}
		})
	}
}

func halve(pts []schema.CurvePoint) []schema.CurvePoint {
	for i := range pts {
		v := *pts[i].Values.TputPerGPU / 2
		pts[i].Values.TputPerGPU = &v
	}
	return pts
}

// TestFrontierTieOrder: of points with equal coordinates the frontier
// keeps the first by arm, then concurrency, whatever their order and row
// ids.
func TestFrontierTieOrder(t *testing.T) {
	v := func(x, y float64) schema.PointValues {
		return schema.PointValues{TputPerGPU: &y, MedianIntvty: &x, P90E2EL: &x}
	}
	pts := []schema.CurvePoint{
		{ResultID: 1, Conc: 8, Config: schema.Config{DecodeTP: 8}, Values: v(10, 100)},
		{ResultID: 2, Conc: 4, Config: schema.Config{DecodeTP: 8}, Values: v(10, 100)},
		{ResultID: 3, Conc: 16, Config: schema.Config{DecodeTP: 4}, Values: v(10, 100)},
	}
	c := &schema.CurveChange{BenchmarkType: schema.BenchmarkSingleTurn}
	point := func(p schema.CurvePoint) schema.FrontierPoint {
		return schema.FrontierPoint{Conc: p.Conc, Arm: arm(c, p)}
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}} {
		var in []schema.CurvePoint
		for _, i := range order {
			in = append(in, pts[i])
		}
		for _, ch := range charts() {
			f := frontier(in, ch, point)
			require.Len(t, f, 1)
			require.Equal(t, int64(3), in[f[0]].ResultID, "%s: tp4 before tp8, in order %v", ch.name, order)
		}
	}
	pts[2].Config.DecodeTP = 8 // all tp8: the lowest concurrency
	f := frontier(pts, charts()[0], point)
	require.Equal(t, int64(2), pts[f[0]].ResultID)
}
