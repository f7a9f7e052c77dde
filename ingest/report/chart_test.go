package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// chartCurve is a curve whose interactivity frontier's throughput is
// scaled by factor after.
func chartCurve(key string, factor float64) schema.CurveChange {
	before := []schema.FrontierXY{{X: 100, Y: 200}, {X: 60, Y: 900}, {X: 20, Y: 2000}}
	after := make([]schema.FrontierXY, len(before))
	for i, p := range before {
		after[i] = schema.FrontierXY{X: p.X, Y: p.Y * factor}
	}
	return schema.CurveChange{Key: key, Before: schema.CurveShape{Points: 3}, After: schema.CurveShape{Points: 3},
		Frontiers: []schema.FrontierChange{{Chart: "interactivity", BeforeLine: before, AfterLine: after}}}
}

// TestFrontierCharts: the three curves whose frontier moved most get a
// Mermaid chart of both lines on one grid, the most moved first, with the
// legend in the caption; a curve whose frontier did not move gets none,
// and a run where none moved has no chart at all.
func TestFrontierCharts(t *testing.T) {
	t.Parallel()
	imp := &schema.Impact{Curves: []schema.CurveChange{
		chartCurve("still", 1), chartCurve("small", 1.1), chartCurve("large", 2), chartCurve("medium", 0.7), chartCurve("half", 1.5),
	}}
	var b strings.Builder
	writeMarkdownCharts(&b, imp)
	got := b.String()
	require.Equal(t, 3, strings.Count(got, "```mermaid\n"))
	require.Equal(t, 3, strings.Count(got, "xychart-beta"))
	large, half, medium := strings.Index(got, "_`large`"), strings.Index(got, "_`half`"), strings.Index(got, "_`medium`")
	require.True(t, large >= 0 && half > large && medium > half, got)
	require.NotContains(t, got, "`small`")
	require.NotContains(t, got, "`still`")
	require.Contains(t, got, "grey before, blue after")
	require.Contains(t, got, "  x-axis \"interactivity (tok/s/user)\" [20.0, 27.3, ")
	// Before, at interactivity 20 or more the best is 2000; after, doubled.
	require.Contains(t, got, "  line [2000, ")
	require.Contains(t, got, "  line [4000, ")

	b.Reset()
	writeMarkdownCharts(&b, &schema.Impact{Curves: []schema.CurveChange{chartCurve("still", 1), {Key: "new"}}})
	require.Empty(t, b.String())
}
