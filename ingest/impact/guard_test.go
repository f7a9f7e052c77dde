package impact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// lossImpact is an impact with two curves that lose coverage and one that
// only gains.
func lossImpact() *schema.Impact {
	return &schema.Impact{Curves: []schema.CurveChange{
		{Key: "dsr1/b200/sglang/fp8/1024x1024/none/agg/off", CoverageLoss: []string{"the curve is no longer shown"}},
		{Key: "dsr1/b200/sglang/fp8/agentic", CoverageLoss: []string{"fewer arms: 2 → 1"}},
		{Key: "dsr1/h100/vllm/fp8/1024x1024/none/agg/off"},
	}}
}

// TestGuardAcceptance: a curve is acknowledged by its key, every open
// curve by the token of the open set or by "all"; a token of another set
// acknowledges nothing.
func TestGuardAcceptance(t *testing.T) {
	t.Parallel()
	both := []string{"dsr1/b200/sglang/fp8/1024x1024/none/agg/off", "dsr1/b200/sglang/fp8/agentic"}
	token := LossToken(both)
	require.Regexp(t, `^loss-[0-9a-f]{10}$`, token)
	require.Equal(t, token, LossToken([]string{both[1], both[0]}), "the token does not depend on the order")
	for _, tt := range []struct {
		name     string
		accept   []string
		open     []string
		accepted []string
	}{
		{"nothing acknowledged", nil, both, nil},
		{"one by key", []string{both[1]}, both[:1], both[1:]},
		{"every curve by the token", []string{token}, nil, both},
		{"every curve by all", []string{AcceptAll}, nil, both},
		{"the token of another set", []string{LossToken(both[:1])}, both, nil},
		{"one by key, the rest by their token", []string{both[0], LossToken(both[1:])}, nil, both},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			imp := lossImpact()
			open := Guard(imp, schema.CoverageGuardRefuse, tt.accept)
			require.Equal(t, tt.open, open)
			require.Equal(t, tt.accepted, imp.Accepted)
			require.Equal(t, schema.CoverageGuardRefuse, imp.Guard)
			require.False(t, imp.Curves[2].Accepted, "a curve without loss is never marked")
		})
	}
}

// TestRefusalReasonIsShort: however many curves, the reason is one short
// line ending with the way to acknowledge them, so nothing cuts it off.
func TestRefusalReasonIsShort(t *testing.T) {
	t.Parallel()
	var keys []string
	for i := range 108 {
		keys = append(keys, strings.Repeat("x", 40)+string(rune('a'+i%26)))
	}
	r := RefusalReason(keys)
	require.Less(t, len(r), 300)
	require.Contains(t, r, "108 published curves")
	require.Contains(t, r, "--accept-coverage-loss "+LossToken(keys)+" (or all)")
}

// TestCheckAppendOnly: every published point a run replaces, re-runs (with
// the same recipe or another) or drops is touched; gained points are
// counted as added.
func TestCheckAppendOnly(t *testing.T) {
	t.Parallel()
	r1, r2 := "recipe-1", "recipe-2"
	pt := func(conc int, arm string, recipe *string) schema.ImpactPoint {
		return schema.ImpactPoint{Conc: conc, Arm: arm, Recipe: recipe}
	}
	imp := &schema.Impact{PointsGained: 3, Curves: []schema.CurveChange{{
		Key:    "c",
		Gained: []schema.GainedPoints{{Arm: "tp8", Concs: []int{1, 2, 3}}},
		Replaced: []schema.Replacement{
			{MatchedBy: schema.MatchedByConcurrency, Previous: pt(4, "tp8", &r1), New: pt(4, "tp8", &r1)},
			{MatchedBy: schema.MatchedByConcurrency, Previous: pt(8, "tp8", &r1), New: pt(8, "tp8", &r2)},
			{MatchedBy: schema.MatchedByInteractivity, Previous: pt(16, "tp8", &r1), New: pt(32, "tp8", &r1)},
		},
		Dropped: []schema.ImpactPoint{pt(64, "tp4", nil)},
	}}}
	touched := CheckAppendOnly(imp)
	require.Equal(t, []schema.TouchedPoint{
		{Curve: "c", Conc: 4, Arm: "tp8", How: schema.TouchedRerun},
		{Curve: "c", Conc: 8, Arm: "tp8", How: schema.TouchedRecipeChanged},
		{Curve: "c", Conc: 16, Arm: "tp8", How: schema.TouchedReplaced},
		{Curve: "c", Conc: 64, Arm: "tp4", How: schema.TouchedRemoved},
	}, touched)
	require.Equal(t, 3, imp.AppendOnly.Added)

	clean := &schema.Impact{PointsGained: 2, Curves: []schema.CurveChange{{Key: "c", Gained: []schema.GainedPoints{{Arm: "tp8", Concs: []int{1, 2}}}}}}
	require.Empty(t, CheckAppendOnly(clean))
	require.Equal(t, &schema.AppendOnlyCheck{Added: 2, Touched: []schema.TouchedPoint{}}, clean.AppendOnly)
}
