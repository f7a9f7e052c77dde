package impact

import (
	"math"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// pair is a removed point (index into removed) and the added point that
// takes its place.
type pair struct {
	old, new int
	by       string
}

// match pairs the points a curve no longer shows (removed) with those it
// shows now (added), one to one: first the same concurrency in the same
// arm and recipe, then in the same arm (a re-run under another recipe),
// then the same concurrency in any arm, then, where no
// concurrency matches, the nearest median interactivity (by ratio). What
// stays unpaired is dropped (removed) or gained (added). Ties go to the
// earlier point, so the result is deterministic.
func match(removed, added []schema.CurvePoint, arms func(schema.CurvePoint) string) []pair {
	usedOld := make([]bool, len(removed))
	usedNew := make([]bool, len(added))
	var out []pair
	byConc := func(sameArm, sameRecipeToo bool) {
		for i, r := range removed {
			if usedOld[i] {
				continue
			}
			for j, a := range added {
				if usedNew[j] || a.Conc != r.Conc {
					continue
				}
				if sameArm && arms(a) != arms(r) || sameRecipeToo && !sameRecipe(a.RecipeFingerprint, r.RecipeFingerprint) {
					continue
				}
				usedOld[i], usedNew[j] = true, true
				out = append(out, pair{i, j, schema.MatchedByConcurrency})
				break
			}
		}
	}
	byConc(true, true)
	byConc(true, false)
	byConc(false, false)
	type cand struct {
		i, j int
		d    float64
	}
	var cs []cand
	for i, r := range removed {
		if usedOld[i] || r.Values.MedianIntvty == nil || !positive(*r.Values.MedianIntvty) {
			continue
		}
		for j, a := range added {
			if usedNew[j] || a.Values.MedianIntvty == nil || !positive(*a.Values.MedianIntvty) {
				continue
			}
			cs = append(cs, cand{i, j, math.Abs(math.Log(*a.Values.MedianIntvty / *r.Values.MedianIntvty))})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		case a.i != b.i:
			return a.i - b.i
		}
		return a.j - b.j
	})
	for _, c := range cs {
		if usedOld[c.i] || usedNew[c.j] {
			continue
		}
		usedOld[c.i], usedNew[c.j] = true, true
		out = append(out, pair{c.i, c.j, schema.MatchedByInteractivity})
	}
	return out
}

func sameRecipe(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// change is the relative change of each value both points have (new /
// previous - 1; none where the previous value is 0).
func change(prev, cur schema.PointValues) schema.PointValues {
	rel := func(p, c *float64) *float64 {
		if p == nil || c == nil || *p == 0 {
			return nil
		}
		v := *c / *p - 1
		return &v
	}
	return schema.PointValues{
		TputPerGPU:       rel(prev.TputPerGPU, cur.TputPerGPU),
		OutputTputPerGPU: rel(prev.OutputTputPerGPU, cur.OutputTputPerGPU),
		MedianIntvty:     rel(prev.MedianIntvty, cur.MedianIntvty),
		P90E2EL:          rel(prev.P90E2EL, cur.P90E2EL),
		MedianTTFT:       rel(prev.MedianTTFT, cur.MedianTTFT),
	}
}
