package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// The frontier charts: for the curves whose interactivity frontier moved
// most, a Mermaid xychart (GitHub draws it in comments) of throughput per
// GPU against interactivity before and after.

const (
	// chartCurves is the number of curves drawn.
	chartCurves = 3
	// chartGrid is the number of interactivity values a frontier is
	// resampled at, so that before and after share one x axis.
	chartGrid = 12
	// chartMinMove is the smallest movement (chartMove) drawn: below it
	// the two lines would look the same.
	chartMinMove = 0.01
	// chartName is the chart the pictures show.
	chartName = "interactivity"
)

// chartLines are a curve's interactivity frontier before and after.
func chartLines(c schema.CurveChange) (before, after []schema.FrontierXY) {
	for _, f := range c.Frontiers {
		if f.Chart == chartName {
			return f.BeforeLine, f.AfterLine
		}
	}
	return nil, nil
}

// bestAt is the best throughput per GPU a frontier reaches at interactivity
// x or more (0 when it reaches none): the frontier read as the dashboard's
// step line.
func bestAt(line []schema.FrontierXY, x float64) float64 {
	best := 0.0
	for _, p := range line {
		if p.X >= x {
			best = max(best, p.Y)
		}
	}
	return best
}

// chartGridOf is the interactivity values both frontiers are read at:
// chartGrid values evenly over the range of both.
func chartGridOf(before, after []schema.FrontierXY) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range append(slices.Clone(before), after...) {
		lo, hi = min(lo, p.X), max(hi, p.X)
	}
	grid := make([]float64, chartGrid)
	for i := range grid {
		grid[i] = lo + (hi-lo)*float64(i)/float64(chartGrid-1)
	}
	return grid
}

// chartMove is how far a curve's frontier moved: the mean, over the grid,
// of the change of the best throughput relative to the larger of the two
// (0 for a curve with no frontier before or after).
func chartMove(c schema.CurveChange) float64 {
	before, after := chartLines(c)
	if len(before) == 0 || len(after) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range chartGridOf(before, after) {
		b, a := bestAt(before, x), bestAt(after, x)
		if m := max(a, b); m > 0 {
			sum += math.Abs(a-b) / m
		}
	}
	return sum / chartGrid
}

// writeMarkdownCharts writes the charts of the curves whose frontier moved
// most, nothing when none moved.
func writeMarkdownCharts(b *strings.Builder, imp *schema.Impact) {
	type moved struct {
		c    schema.CurveChange
		move float64
	}
	var ms []moved
	for _, c := range imp.Curves {
		if m := chartMove(c); m >= chartMinMove {
			ms = append(ms, moved{c, m})
		}
	}
	if len(ms) == 0 {
		return
	}
	slices.SortStableFunc(ms, func(x, y moved) int { return cmp.Compare(y.move, x.move) })
	ms = ms[:min(chartCurves, len(ms))]
	fmt.Fprintf(b, "\n<details open><summary>Frontier moved most: %s</summary>\n", wording.Plural(len(ms), "curve", "curves"))
	for _, m := range ms {
		before, after := chartLines(m.c)
		grid := chartGridOf(before, after)
		var xs, ys [2][]string
		for _, x := range grid {
			xs[0] = append(xs[0], number(&x))
			for i, line := range [][]schema.FrontierXY{before, after} {
				y := bestAt(line, x)
				ys[i] = append(ys[i], number(&y))
			}
		}
		b.WriteString("\n```mermaid\n")
		b.WriteString("%%{init: {\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"#8c959f, #0969da\"}}}}%%\n")
		b.WriteString("xychart-beta\n")
		fmt.Fprintf(b, "  x-axis \"interactivity (tok/s/user)\" [%s]\n", strings.Join(xs[0], ", "))
		b.WriteString("  y-axis \"tput/GPU (tok/s/GPU)\"\n")
		fmt.Fprintf(b, "  line [%s]\n  line [%s]\n", strings.Join(ys[0], ", "), strings.Join(ys[1], ", "))
		b.WriteString("```\n")
		fmt.Fprintf(b, "\n_`%s`: grey before, blue after — the best throughput per GPU the frontier reaches at each "+
			"interactivity or more; moved %.0f %% on average._\n", m.c.Key, m.move*100)
	}
	b.WriteString("\n</details>\n")
}
