package impact

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/schema"
)

// chart is one chart of the dashboard a frontier is drawn on: throughput
// per GPU (higher is better) over x.
type chart struct {
	name string
	x    func(schema.PointValues) *float64
	// maxX: a higher x is better.
	maxX bool
}

// charts are the dashboard's two charts of a curve: throughput per GPU
// over median interactivity (the default chart, both higher is better) and
// over p90 end-to-end latency (lower is better), the axes reviewers count
// frontier points on.
func charts() []chart {
	return []chart{
		{name: "interactivity", x: func(v schema.PointValues) *float64 { return v.MedianIntvty }, maxX: true},
		{name: "e2el", x: func(v schema.PointValues) *float64 { return v.P90E2EL }, maxX: false},
	}
}

// recommendedFrontier is the producer's recommended minimum of frontier
// points per curve (InferenceX infx/workflows/pareto_coverage.py).
const recommendedFrontier = 5

// coords are a point's coordinates on ch; ok is false unless both are
// positive finite numbers (the producer's eligibility rule: a point
// without them is never on the frontier).
func coords(v schema.PointValues, ch chart) (x, y float64, ok bool) {
	px, py := ch.x(v), v.TputPerGPU
	if px == nil || py == nil || !positive(*px) || !positive(*py) {
		return 0, 0, false
	}
	return *px, *py, true
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) && !math.IsNaN(v) }

// frontier returns the indexes (ascending) of the points of pts on the
// Pareto frontier of ch, by the dashboard's rule (InferenceX-app
// globalParetoFrontier): the eligible points ordered best x first, then
// best y, and a point is kept when its y is strictly better than every y
// kept before it. Of points with equal coordinates only the first in the
// tie order can be on it: arm, then concurrency (point names them), then
// recipe fingerprint (none first), then the index in pts. The order
// follows what the point is, never its row id, so a re-ingest of the same
// points puts the same one on the frontier.
func frontier(pts []schema.CurvePoint, ch chart, point func(schema.CurvePoint) schema.FrontierPoint) []int {
	type cand struct {
		i    int
		x, y float64
		id   schema.FrontierPoint
	}
	var cs []cand
	for i, p := range pts {
		if x, y, ok := coords(p.Values, ch); ok {
			cs = append(cs, cand{i, x, y, point(p)})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.x != b.x {
			if (a.x > b.x) == ch.maxX {
				return -1
			}
			return 1
		}
		if a.y != b.y {
			if a.y > b.y {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(a.id.Arm, b.id.Arm), cmp.Compare(a.id.Conc, b.id.Conc),
			strings.Compare(ptr.Deref(pts[a.i].RecipeFingerprint), ptr.Deref(pts[b.i].RecipeFingerprint)), a.i-b.i)
	})
	var out []int
	best := math.Inf(-1)
	for _, c := range cs {
		if c.y > best {
			best = c.y
			out = append(out, c.i)
		}
	}
	slices.Sort(out)
	return out
}

// dominates reports whether a is at least as good as b on both axes of
// ch.
func dominates(a, b schema.PointValues, ch chart) bool {
	ax, ay, ok := coords(a, ch)
	if !ok {
		return false
	}
	bx, by, ok := coords(b, ch)
	if !ok {
		return false
	}
	xOK := ax >= bx
	if !ch.maxX {
		xOK = ax <= bx
	}
	return xOK && ay >= by
}
