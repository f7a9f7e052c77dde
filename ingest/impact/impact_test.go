package impact_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// The two overlapping runs of the golden tests. Run 100 publishes three
// curves: 1k/1k with two arms (tp8 at conc 4–64, tp4 at 4–16), 8k/1k
// (tp8 at 4, 8) and an AgentX curve with an offload arm. Run 200, a full
// run a day later, replaces 1k/1k by a narrow sweep (tp8 at 4–16 only) and
// re-tunes the AgentX curve (other concurrencies, no offload arm); run 300,
// append-only, adds conc 16 to 8k/1k.
func run100() genRun {
	return genRun{id: 100, day: 1, points: []pt{
		{conc: 4, tput: 100, intvty: 50, e2el: 10},
		{conc: 8, tput: 180, intvty: 40, e2el: 12},
		{conc: 16, tput: 300, intvty: 30, e2el: 15},
		{conc: 32, tput: 420, intvty: 20, e2el: 20},
		{conc: 64, tput: 500, intvty: 10, e2el: 30},
		{tp: 4, conc: 4, tput: 90, intvty: 60, e2el: 9},
		{tp: 4, conc: 8, tput: 150, intvty: 45, e2el: 11},
		{tp: 4, conc: 16, tput: 200, intvty: 25, e2el: 18},
		{isl: 8192, conc: 4, tput: 40, intvty: 30, e2el: 40},
		{isl: 8192, conc: 8, tput: 70, intvty: 25, e2el: 45},
		{agentic: true, conc: 1, tput: 50, intvty: 80, e2el: 5},
		{agentic: true, conc: 2, tput: 90, intvty: 70, e2el: 6},
		{agentic: true, conc: 4, tput: 160, intvty: 55, e2el: 8},
		{agentic: true, offload: "on", conc: 1, tput: 45, intvty: 78, e2el: 5.5},
		{agentic: true, offload: "on", conc: 2, tput: 85, intvty: 68, e2el: 6.5},
	}}
}

func run200() genRun {
	return genRun{id: 200, day: 2, points: []pt{
		{conc: 4, tput: 110, intvty: 52, e2el: 9.5},
		{conc: 8, tput: 190, intvty: 41, e2el: 11.5},
		{conc: 16, tput: 310, intvty: 31, e2el: 14},
		{agentic: true, conc: 1, tput: 55, intvty: 82, e2el: 4.8},
		{agentic: true, conc: 3, tput: 130, intvty: 62, e2el: 7},
		{agentic: true, conc: 4, tput: 170, intvty: 56, e2el: 7.5},
		{agentic: true, conc: 8, tput: 260, intvty: 40, e2el: 10},
	}}
}

func run300() genRun {
	return genRun{id: 300, day: 3, appendOnly: true, points: []pt{
		{isl: 8192, conc: 16, tput: 120, intvty: 20, e2el: 50},
	}}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

func curveByKey(t *testing.T, imp *schema.Impact, key string) schema.CurveChange {
	t.Helper()
	for _, c := range imp.Curves {
		if c.Key == key {
			return c
		}
	}
	t.Fatalf("no curve %s in the impact", key)
	return schema.CurveChange{}
}

func frontierOf(t *testing.T, c schema.CurveChange, chart string) schema.FrontierChange {
	t.Helper()
	for _, f := range c.Frontiers {
		if f.Chart == chart {
			return f
		}
	}
	t.Fatalf("curve %s: no %s frontier", c.Key, chart)
	return schema.FrontierChange{}
}

// TestImpactOverlappingRuns: the impact of each run of the golden pair,
// checked by hand where it matters and in full against the goldens.
func TestImpactOverlappingRuns(t *testing.T) {
	st := openStore(t)

	first := ingestRun(t, st, run100())
	require.Equal(t, schema.ImpactChanged, first.Status)
	require.Equal(t, 3, first.CurvesTouched)
	require.Equal(t, 15, first.PointsGained, "every point is new on the dashboard")
	require.Zero(t, first.CoverageLossCurves, "nothing was published before")

	imp := ingestRun(t, st, run200())
	golden(t, "narrow_replacement.json", imp)
	require.Equal(t, 2, imp.CurvesTouched, "8k/1k is not on run 200")
	require.Equal(t, 2, imp.CoverageLossCurves)
	require.Equal(t, int64(imp.PointsGained+imp.PointsReplaced), imp.RowsAdded)
	require.Equal(t, int64(imp.PointsReplaced+imp.PointsDropped), imp.RowsRemoved)

	// 1k/1k: 8 points in two arms become 3 in one (the narrow replacement).
	a := curveByKey(t, imp, "dsr1/b200/sglang/fp8/1024x1024/none/agg/off")
	require.Equal(t, schema.CurveShape{Points: 8, Arms: []string{"tp4", "tp8"}, ConcMin: 4, ConcMax: 64,
		SnapshotRunID: 100, SnapshotDate: "2026-11-01"}, a.Before)
	require.Equal(t, schema.CurveShape{Points: 3, Arms: []string{"tp8"}, ConcMin: 4, ConcMax: 16,
		SnapshotRunID: 200, SnapshotDate: "2026-11-02"}, a.After)
	require.Len(t, a.Replaced, 3)
	require.Len(t, a.Dropped, 5)
	require.Empty(t, a.Gained)
	// Top change first: conc 4, tput 100 → 110 (+10 %), then conc 8
	// (180 → 190, +5.56 %), then conc 16 (300 → 310, +3.33 %).
	r := a.Replaced[0]
	require.Equal(t, schema.MatchedByConcurrency, r.MatchedBy)
	require.Equal(t, 4, r.New.Conc)
	require.InDelta(t, 0.10, *r.Change.TputPerGPU, 1e-12)
	require.InDelta(t, 0.10, *r.Change.OutputTputPerGPU, 1e-12)
	require.InDelta(t, 0.04, *r.Change.MedianIntvty, 1e-12) // 50 → 52
	require.InDelta(t, -0.05, *r.Change.P90E2EL, 1e-12)     // 10 → 9.5
	require.InDelta(t, -0.05, *r.Change.MedianTTFT, 1e-12)  // 1 → 0.95
	require.InDelta(t, 10.0/180, *a.Replaced[1].Change.TputPerGPU, 1e-12)
	require.InDelta(t, 10.0/300, *a.Replaced[2].Change.TputPerGPU, 1e-12)
	require.Equal(t, []schema.RunRef{{RunID: 100, Attempt: 1}}, a.SupersededRuns)
	// Interactivity frontier before: every point but tp4 conc 16 (25, 200),
	// which tp8 conc 16 (30, 300) dominates: 7. After: the 3 new points.
	fi := frontierOf(t, a, "interactivity")
	require.Equal(t, 7, fi.Before)
	require.Equal(t, 3, fi.After)
	require.True(t, fi.Few)
	require.Len(t, fi.New, 3)
	undominated := map[string]bool{}
	for _, l := range fi.Lost {
		if !l.Dominated {
			undominated[l.Arm+"@"+itoa(l.Conc)] = true
		}
	}
	require.Equal(t, map[string]bool{"tp8@32": true, "tp8@64": true, "tp4@4": true, "tp4@8": true}, undominated,
		"tp8 at 4, 8, 16 are dominated by their replacements")
	fe := frontierOf(t, a, "e2el")
	require.Equal(t, 7, fe.Before)
	require.Equal(t, 3, fe.After)
	// The coverage loss: the five points with no re-measurement, tp4, the
	// span above 16, both ranges, and the tp8 top end on both frontiers
	// (tp4 at 4 and 8, on the frontier before, are reached within 20 % by
	// tp8 at 4: interactivity 52 × 1.2 ≥ 60, throughput 110 ≥ 90).
	require.Equal(t, []string{
		"5 points no longer shown, with no re-measurement at the same concurrency and arm: conc 4 tp4, conc 8 tp4, conc 16 tp4, conc 32 tp8, conc 64 tp8",
		"fewer arms: 2 → 1 (no longer shown: tp4)",
		"narrower concurrency span: 4–64 → 4–16",
		"interactivity range shrinks beyond 20 %: 10–60 → 31–52",
		"e2el range shrinks beyond 20 %: 9–30 → 9.5–14",
		"interactivity frontier: 2 points that no point after reaches within 20 % (x) and 20 % (throughput): conc 32 tp8, conc 64 tp8",
		"e2el frontier: 2 points that no point after reaches within 20 % (x) and 20 % (throughput): conc 32 tp8, conc 64 tp8",
	}, a.CoverageLoss)

	// AgentX: one curve over both arms; conc 1 and 4 are replaced by
	// concurrency, conc 2 (tp8 and offload) by the nearest interactivity
	// (68 → 62 at conc 3: ln(68/62) = 0.092 is the smallest distance,
	// then 70 → 40 at conc 8), the offload arm's conc 1 is dropped.
	x := curveByKey(t, imp, "dsr1/b200/sglang/fp8/agentic")
	require.Equal(t, 5, x.Before.Points)
	require.Equal(t, []string{"tp8", "tp8 offload"}, x.Before.Arms)
	require.Len(t, x.Replaced, 4)
	byInteractivity := map[string]int{}
	for _, r := range x.Replaced {
		if r.MatchedBy == schema.MatchedByInteractivity {
			byInteractivity[r.Previous.Arm+"@"+itoa(r.Previous.Conc)] = r.New.Conc
		}
	}
	require.Equal(t, map[string]int{"tp8 offload@2": 3, "tp8@2": 8}, byInteractivity)
	require.Len(t, x.Dropped, 1)
	require.Equal(t, "tp8 offload", x.Dropped[0].Arm)
	require.Equal(t, 1, x.Dropped[0].Conc)
	// Frontier on interactivity: before (80,50), (70,90), (55,160) — the
	// offload points are dominated; after all 4. conc 2 (70, 90) has no
	// point after with interactivity ≥ 70 and throughput ≥ 90.
	xi := frontierOf(t, x, "interactivity")
	require.Equal(t, 3, xi.Before)
	require.Equal(t, 4, xi.After)
	require.True(t, xi.Few)
	// Coverage: conc 2 (both arms) and the offload arm's conc 1 are not
	// measured again; conc 2's frontier region (70, 90) is reached within
	// AgentX's noise by conc 3 (62 × 1.2 ≥ 70, 130 ≥ 90).
	require.Equal(t, []string{
		"3 points no longer shown, with no re-measurement at the same concurrency and arm: conc 2 tp8, conc 1 tp8 offload, conc 2 tp8 offload",
		"fewer arms: 2 → 1 (no longer shown: tp8 offload)",
	}, x.CoverageLoss)

	// Append-only: 8k/1k gains conc 16 and keeps its two points.
	app := ingestRun(t, st, run300())
	golden(t, "append.json", app)
	require.Equal(t, 1, app.CurvesChanged)
	b := app.Curves[0]
	require.Equal(t, "dsr1/b200/sglang/fp8/8192x1024/none/agg/off", b.Key)
	require.Equal(t, []schema.GainedPoints{{Arm: "tp8", RunID: 300, Attempt: 1, Concs: []int{16}}}, b.Gained)
	require.Equal(t, 2, b.Kept)
	require.Empty(t, b.Dropped)
	require.Empty(t, b.Replaced)
	require.Empty(t, b.CoverageLoss)
	require.Empty(t, b.SupersededRuns, "run 100's points stay, under run 300's snapshot")
	require.Equal(t, int64(1), app.RowsAdded)
	require.Zero(t, app.RowsRemoved)

	// The same rows again: nothing is written, nothing changes.
	again := ingestRun(t, st, run200())
	require.Equal(t, schema.ImpactUnchanged, again.Status)
	require.Empty(t, again.Curves)

	// A run older than every curve's newest touches them and changes none.
	old := run100()
	old.id, old.day = 50, 0 // 2026-10-31
	for i := range old.points {
		old.points[i].tput /= 2
	}
	stale := ingestRun(t, st, old)
	require.Equal(t, schema.ImpactUnchanged, stale.Status)
	require.Equal(t, 3, stale.CurvesTouched)
	require.Zero(t, stale.CurvesChanged)
}
