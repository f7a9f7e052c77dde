package impact

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// tolerance is the run-to-run noise of a curve's values: a value measured
// again may be worse by up to a factor 1 + t of its axis (throughput per
// GPU, median interactivity, p90 end-to-end latency) and still count as the
// same coverage.
type tolerance struct{ tput, intvty, e2el float64 }

// toleranceOf is the noise of a curve's benchmark type: the largest factor
// between two re-runs of one configuration in the generator's noise model
// (fixtures/generate), rounded up to the next 5 %; AgentX, whose hour-long
// trace replay profiles a varying number of requests of varying lengths,
// is noisier. The factors are in docs/performance.md, "Current figures";
// the shared fixtures hold no real pair of measurements of one
// configuration to check them against.
func toleranceOf(benchmarkType string) tolerance {
	if benchmarkType == schema.BenchmarkAgenticTraces {
		return tolerance{tput: 0.85, intvty: 0.20, e2el: 0.40}
	}
	return tolerance{tput: 0.20, intvty: 0.20, e2el: 0.20}
}

// x is the tolerance of ch's x axis.
func (t tolerance) x(ch chart) float64 {
	if ch.maxX {
		return t.intvty
	}
	return t.e2el
}

// maxListed bounds the points one coverage-loss line names.
const maxListed = 8

// coverageLoss lists what a reader of the published curve (one that had
// points before) loses: points that disappear with no re-measurement (the
// same concurrency in the same arm), arms and the concurrency span, the
// interactivity or p90 E2EL range shrinking by more than the noise, and
// frontier points of before that no point after reaches within the noise
// (an after point whose x and y are both at most the tolerance worse). A
// re-measured point replaces its predecessor, and a re-run whose values
// move within the noise loses nothing.
func coverageLoss(c schema.CurveChange, before, after []schema.CurvePoint, point func(schema.CurvePoint) schema.FrontierPoint) []string {
	out := []string{}
	if len(before) == 0 {
		return out
	}
	b, a := c.Before, c.After
	if a.Points == 0 {
		return append(out, "the curve is no longer shown")
	}
	lost := slices.Clone(c.Dropped)
	for _, r := range c.Replaced {
		if r.MatchedBy != schema.MatchedByConcurrency || r.Previous.Arm != r.New.Arm {
			lost = append(lost, r.Previous)
		}
	}
	if len(lost) > 0 {
		slices.SortStableFunc(lost, func(x, y schema.ImpactPoint) int {
			return cmp.Or(strings.Compare(x.Arm, y.Arm), cmp.Compare(x.Conc, y.Conc))
		})
		names := make([]schema.FrontierPoint, len(lost))
		for i, p := range lost {
			names[i] = schema.FrontierPoint{Conc: p.Conc, Arm: p.Arm}
		}
		out = append(out, fmt.Sprintf("%s no longer shown, with no re-measurement at the same concurrency and arm: %s",
			wording.Plural(len(lost), "point", "points"), listPoints(names)))
	}
	if len(a.Arms) < len(b.Arms) {
		var gone []string
		for _, x := range b.Arms {
			if !slices.Contains(a.Arms, x) {
				gone = append(gone, x)
			}
		}
		out = append(out, fmt.Sprintf("fewer arms: %d → %d (no longer shown: %s)", len(b.Arms), len(a.Arms), strings.Join(gone, ", ")))
	}
	if a.ConcMin > b.ConcMin || a.ConcMax < b.ConcMax {
		out = append(out, fmt.Sprintf("narrower concurrency span: %d–%d → %d–%d", b.ConcMin, b.ConcMax, a.ConcMin, a.ConcMax))
	}
	tol := toleranceOf(c.BenchmarkType)
	for _, ch := range charts() {
		if s := shrunkRange(before, after, ch, tol.x(ch)); s != "" {
			out = append(out, s)
		}
	}
	for _, ch := range charts() {
		var unreached []schema.FrontierPoint
		for _, i := range frontier(before, ch, point) {
			if !reached(before[i].Values, after, ch, tol) {
				unreached = append(unreached, point(before[i]))
			}
		}
		if len(unreached) > 0 {
			out = append(out, fmt.Sprintf("%s frontier: %s that no point after reaches within %s (x) and %s (throughput): %s",
				ch.name, wording.Plural(len(unreached), "point", "points"), percent(tol.x(ch)), percent(tol.tput), listPoints(unreached)))
		}
	}
	return out
}

// reached tells whether a point of after reaches p on ch: its x and its
// throughput are each at most the tolerance worse than p's.
func reached(p schema.PointValues, after []schema.CurvePoint, ch chart, tol tolerance) bool {
	px, py, ok := coords(p, ch)
	if !ok {
		return true
	}
	tx := 1 + tol.x(ch)
	for _, q := range after {
		qx, qy, ok := coords(q.Values, ch)
		if !ok || qy*(1+tol.tput) < py {
			continue
		}
		if ch.maxX && qx*tx >= px || !ch.maxX && qx <= px*tx {
			return true
		}
	}
	return false
}

// shrunkRange describes how the range of ch's x over the curve's eligible
// points shrinks by more than the tolerance t at either end ("" when it
// does not).
func shrunkRange(before, after []schema.CurvePoint, ch chart, t float64) string {
	span := func(pts []schema.CurvePoint) (lo, hi float64, ok bool) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			if x, _, eligible := coords(p.Values, ch); eligible {
				lo, hi, ok = min(lo, x), max(hi, x), true
			}
		}
		return lo, hi, ok
	}
	blo, bhi, ok := span(before)
	if !ok {
		return ""
	}
	alo, ahi, ok := span(after)
	if !ok {
		return fmt.Sprintf("%s range: no point after has one", ch.name)
	}
	if alo <= blo*(1+t) && ahi*(1+t) >= bhi {
		return ""
	}
	return fmt.Sprintf("%s range shrinks beyond %s: %.4g–%.4g → %.4g–%.4g", ch.name, percent(t), blo, bhi, alo, ahi)
}

func percent(t float64) string { return fmt.Sprintf("%g %%", math.Round(t*100)) }

// listPoints names points as "conc N arm", at most maxListed of them.
func listPoints(pts []schema.FrontierPoint) string {
	var names []string
	for i, p := range pts {
		if i == maxListed {
			names = append(names, fmt.Sprintf("and %d more", len(pts)-maxListed))
			break
		}
		names = append(names, fmt.Sprintf("conc %d %s", p.Conc, p.Arm))
	}
	return strings.Join(names, ", ")
}
