package impact

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/schema"
)

// Compute tells what the update of latest_benchmarks (view, the outcome
// of RunTx.UpdateLatestBenchmarks) did to the curves it touched (curves,
// from RunTx.CurveImpact). An update that failed has no known impact; one
// that was skipped (the run changed nothing the view shows) changes
// nothing.
func Compute(curves []schema.CurveImpact, view schema.ViewRefresh) (*schema.Impact, error) {
	imp := &schema.Impact{Status: schema.ImpactUnchanged, Curves: []schema.CurveChange{}}
	switch view.Status {
	case schema.RefreshFailed:
		imp.Status = schema.ImpactUnknown
		return imp, nil
	case schema.RefreshSkipped:
		return imp, nil
	}
	imp.RowsAdded, imp.RowsRemoved = view.Added, view.Removed
	imp.CurvesTouched = len(curves)
	for _, ci := range curves {
		c, err := curve(ci)
		if err != nil {
			return nil, err
		}
		imp.PointsGained += c.GainedCount()
		imp.PointsReplaced += len(c.Replaced)
		imp.PointsDropped += len(c.Dropped)
		imp.PointsKept += c.Kept
		if changed(c) == 0 {
			continue
		}
		imp.CurvesChanged++
		if len(c.CoverageLoss) > 0 {
			imp.CoverageLossCurves++
		}
		imp.Curves = append(imp.Curves, c)
	}
	if imp.CurvesChanged > 0 {
		imp.Status = schema.ImpactChanged
	}
	slices.SortStableFunc(imp.Curves, func(a, b schema.CurveChange) int {
		if la, lb := len(a.CoverageLoss) > 0, len(b.CoverageLoss) > 0; la != lb {
			if la {
				return -1
			}
			return 1
		}
		if d := changed(b) - changed(a); d != 0 {
			return d
		}
		return strings.Compare(a.Key, b.Key)
	})
	return imp, nil
}

// Unchanged is the impact of a rerun answered from the ledger (prior: the
// earlier ingest's): nothing was written, so nothing the dashboard shows
// changes; the eval evidence is the earlier ingest's.
func Unchanged(prior *schema.Impact) *schema.Impact {
	imp := &schema.Impact{Status: schema.ImpactUnchanged, Curves: []schema.CurveChange{}}
	if prior != nil {
		imp.Evals = prior.Evals
	}
	return imp
}

func changed(c schema.CurveChange) int { return c.GainedCount() + len(c.Replaced) + len(c.Dropped) }

// curve computes one curve's change.
func curve(ci schema.CurveImpact) (schema.CurveChange, error) {
	c := schema.CurveChange{Gained: []schema.GainedPoints{}, Replaced: []schema.Replacement{}, Dropped: []schema.ImpactPoint{},
		SupersededRuns: []schema.RunRef{}, Frontiers: []schema.FrontierChange{}, CoverageLoss: []string{}}
	if err := describe(&c, ci.Scope); err != nil {
		return c, err
	}
	// A point's arm follows from its config and offload mode: named once
	// per pair (a curve of 5000 points has a few dozen).
	type armKey struct {
		config  int64
		offload string
	}
	arms := map[armKey]string{}
	armOf := func(p schema.CurvePoint) string {
		k := armKey{p.ConfigID, p.OffloadMode}
		a, ok := arms[k]
		if !ok {
			a = arm(&c, p)
			arms[k] = a
		}
		return a
	}
	valued := func(p schema.CurvePoint) schema.ImpactPoint {
		return schema.ImpactPoint{Conc: p.Conc, Arm: armOf(p), Recipe: p.RecipeFingerprint, RunID: p.GitHubRunID,
			Attempt: p.RunAttempt, Values: p.Values}
	}
	named := func(p schema.CurvePoint) schema.FrontierPoint {
		return schema.FrontierPoint{Conc: p.Conc, Arm: armOf(p)}
	}
	// removed and added (and gained, below) are read only: a curve that
	// showed nothing before (every curve of a first ingest) has its points
	// after as they are, not copied.
	var removed []schema.CurvePoint
	added := ci.After
	if len(ci.Before) > 0 {
		after := make(map[int64]bool, len(ci.After))
		for _, p := range ci.After {
			after[p.ResultID] = true
		}
		before := make(map[int64]bool, len(ci.Before))
		removed, added = make([]schema.CurvePoint, 0, len(ci.Before)), make([]schema.CurvePoint, 0, len(ci.After))
		for _, p := range ci.Before {
			before[p.ResultID] = true
			if after[p.ResultID] {
				c.Kept++
			} else {
				removed = append(removed, p)
			}
		}
		for _, p := range ci.After {
			if !before[p.ResultID] {
				added = append(added, p)
			}
		}
	}
	pairs := match(removed, added, armOf)
	oldUsed, newUsed := make([]bool, len(removed)), make([]bool, len(added))
	for _, pr := range pairs {
		oldUsed[pr.old], newUsed[pr.new] = true, true
		o, n := removed[pr.old], added[pr.new]
		c.Replaced = append(c.Replaced, schema.Replacement{MatchedBy: pr.by, Previous: valued(o), New: valued(n),
			Change: change(o.Values, n.Values)})
	}
	for i, p := range removed {
		if !oldUsed[i] {
			c.Dropped = append(c.Dropped, valued(p))
		}
	}
	gained := added
	if len(pairs) > 0 {
		gained = make([]schema.CurvePoint, 0, len(added)-len(pairs))
		for j, p := range added {
			if !newUsed[j] {
				gained = append(gained, p)
			}
		}
	}
	c.Gained = groupGained(gained, armOf)
	byPoint := func(a, b schema.ImpactPoint) int {
		return cmp.Or(strings.Compare(a.Arm, b.Arm), cmp.Compare(a.Conc, b.Conc))
	}
	slices.SortStableFunc(c.Dropped, byPoint)
	slices.SortStableFunc(c.Replaced, func(a, b schema.Replacement) int {
		return cmp.Or(cmp.Compare(magnitude(b.Change.TputPerGPU), magnitude(a.Change.TputPerGPU)), byPoint(a.New, b.New))
	})
	c.Before, c.After = shape(ci.Before, armOf), shape(ci.After, armOf)
	c.SupersededRuns = superseded(ci.Before, ci.After)
	for _, ch := range charts() {
		c.Frontiers = append(c.Frontiers, frontierChange(ci.Before, ci.After, ch, named))
	}
	c.CoverageLoss = coverageLoss(c, ci.Before, ci.After, named)
	return c, nil
}

// groupGained groups gained points by arm, recipe and run (in that
// order), each group's concurrencies ascending.
func groupGained(pts []schema.CurvePoint, armOf func(schema.CurvePoint) string) []schema.GainedPoints {
	type groupKey struct {
		arm       string
		hasRecipe bool
		recipe    string
		run       int64
		attempt   int
	}
	out := []schema.GainedPoints{}
	at := map[groupKey]int{}
	for _, p := range pts {
		g := schema.GainedPoints{Arm: armOf(p), Recipe: p.RecipeFingerprint, RunID: p.GitHubRunID, Attempt: p.RunAttempt}
		key := groupKey{g.Arm, g.Recipe != nil, ptr.Deref(g.Recipe), g.RunID, g.Attempt}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, g)
		}
		out[i].Concs = append(out[i].Concs, p.Conc)
	}
	for i := range out {
		slices.Sort(out[i].Concs)
	}
	slices.SortStableFunc(out, func(a, b schema.GainedPoints) int {
		return cmp.Or(strings.Compare(a.Arm, b.Arm), strings.Compare(ptr.Deref(a.Recipe), ptr.Deref(b.Recipe)),
			cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out
}

// magnitude orders relative changes: the largest first, none last.
func magnitude(v *float64) float64 {
	if v == nil {
		return -1
	}
	return math.Abs(*v)
}

// shape is one side of a curve.
func shape(pts []schema.CurvePoint, armOf func(schema.CurvePoint) string) schema.CurveShape {
	s := schema.CurveShape{Points: len(pts), Arms: []string{}}
	for i, p := range pts {
		if i == 0 || p.Conc < s.ConcMin {
			s.ConcMin = p.Conc
		}
		s.ConcMax = max(s.ConcMax, p.Conc)
		if a := armOf(p); !slices.Contains(s.Arms, a) {
			s.Arms = append(s.Arms, a)
		}
		s.SnapshotRunID, s.SnapshotDate = p.SnapshotGitHubRunID, p.SnapshotDate
	}
	slices.Sort(s.Arms)
	return s
}

// superseded lists the GitHub runs (and attempts) whose points the curve
// showed before and shows none of after.
func superseded(before, after []schema.CurvePoint) []schema.RunRef {
	shown := map[schema.RunRef]bool{}
	for _, p := range after {
		shown[schema.RunRef{RunID: p.GitHubRunID, Attempt: p.RunAttempt}] = true
	}
	out := []schema.RunRef{}
	for _, p := range before {
		r := schema.RunRef{RunID: p.GitHubRunID, Attempt: p.RunAttempt}
		if p.Deleted || shown[r] || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b schema.RunRef) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out
}

// frontierChange is the curve's frontier on ch before and after: the new
// points on it and the points of the frontier before that the curve no
// longer shows, each dominated or not by a point shown after.
func frontierChange(before, after []schema.CurvePoint, ch chart, point func(schema.CurvePoint) schema.FrontierPoint) schema.FrontierChange {
	fb, fa := frontier(before, ch, point), frontier(after, ch, point)
	f := schema.FrontierChange{Chart: ch.name, Before: len(fb), After: len(fa), New: []schema.FrontierPoint{},
		Lost: []schema.LostFrontierPoint{}}
	f.Few = len(after) > 0 && len(fa) < recommendedFrontier
	f.BeforeLine, f.AfterLine = frontierLine(before, fb, ch), frontierLine(after, fa, ch)
	inBefore, inAfter := map[int64]bool{}, map[int64]bool{}
	for _, p := range before {
		inBefore[p.ResultID] = true
	}
	for _, p := range after {
		inAfter[p.ResultID] = true
	}
	for _, i := range fa {
		if !inBefore[after[i].ResultID] {
			f.New = append(f.New, point(after[i]))
		}
	}
	for _, i := range fb {
		p := before[i]
		if inAfter[p.ResultID] {
			continue
		}
		lost := schema.LostFrontierPoint{FrontierPoint: point(p)}
		for _, q := range after {
			if dominates(q.Values, p.Values, ch) {
				lost.Dominated = true
				break
			}
		}
		f.Lost = append(f.Lost, lost)
	}
	return f
}

// frontierLine is the chart coordinates of the frontier points idx of
// pts, best x first.
func frontierLine(pts []schema.CurvePoint, idx []int, ch chart) []schema.FrontierXY {
	var line []schema.FrontierXY
	for _, i := range idx {
		if x, y, ok := coords(pts[i].Values, ch); ok {
			line = append(line, schema.FrontierXY{X: x, Y: y})
		}
	}
	slices.SortFunc(line, func(a, b schema.FrontierXY) int {
		if ch.maxX {
			return cmp.Compare(b.X, a.X)
		}
		return cmp.Compare(a.X, b.X)
	})
	return line
}
