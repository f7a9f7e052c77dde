package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// The impact section: what the run does to the published dashboard
// (summary.impact). Markdown puts it in a <details> block, the top changes
// first and the rest counted; the JSON summary has the full list.

// Bounds of the rendered impact section.
const (
	impactCurveLimit       = 10 // curves listed
	impactReplacementLimit = 5  // replaced points listed per curve
	impactPointLimit       = 8  // gained or dropped points named per curve
)

// impactMetric is one value a replacement compares, as the report names it.
type impactMetric struct {
	label string
	get   func(schema.PointValues) *float64
}

func impactMetrics() []impactMetric {
	return []impactMetric{
		{"tput/GPU", func(v schema.PointValues) *float64 { return v.TputPerGPU }},
		{"output tput/GPU", func(v schema.PointValues) *float64 { return v.OutputTputPerGPU }},
		{"interactivity", func(v schema.PointValues) *float64 { return v.MedianIntvty }},
		{"p90 E2EL", func(v schema.PointValues) *float64 { return v.P90E2EL }},
		{"TTFT", func(v schema.PointValues) *float64 { return v.MedianTTFT }},
	}
}

// openCoverageLoss is the number of curves that lose coverage without
// acknowledgement.
func openCoverageLoss(imp *schema.Impact) int {
	if imp == nil {
		return 0
	}
	return imp.CoverageLossCurves - len(imp.Accepted)
}

// headingWithImpact is headingEN with the coverage loss of a run that was
// (or, dry, would be) written: ⚠️ and the number of curves.
func headingWithImpact(s *schema.Summary, esc func(string) string) (string, string) {
	emoji, sentence := headingEN(s, esc)
	n := openCoverageLoss(s.Impact)
	if n <= 0 || s.Status == schema.StatusAborted {
		return emoji, sentence
	}
	if emoji == "✅" {
		emoji = "⚠️"
	}
	return emoji, sentence + fmt.Sprintf(" ⚠️ Coverage loss on %s (see the dashboard impact).",
		plural(n, "published curve", "published curves"))
}

// withCoverageLossZH is withCoverageLoss for the Chinese heading.
func withCoverageLossZH(s *schema.Summary, heading string) string {
	n := openCoverageLoss(s.Impact)
	if n <= 0 || s.Status == schema.StatusAborted {
		return heading
	}
	return heading + fmt.Sprintf(" ⚠️ %d 条已发布曲线覆盖缩小。", n)
}

// impactHeadline is the one-line summary of the section.
func impactHeadline(imp *schema.Impact) string {
	switch imp.Status {
	case schema.ImpactUnknown:
		return "Dashboard impact: unknown (latest_benchmarks was not updated in the run's transaction)."
	case schema.ImpactUnchanged:
		if imp.CurvesTouched > 0 {
			return fmt.Sprintf("Dashboard impact: nothing changes (%s touched, every point as before).",
				plural(imp.CurvesTouched, "curve", "curves"))
		}
		return "Dashboard impact: nothing changes."
	}
	s := fmt.Sprintf("Dashboard impact: %s of %d touched change — %d gained, %d replaced, %d dropped, %d kept",
		plural(imp.CurvesChanged, "curve", "curves"), imp.CurvesTouched, imp.PointsGained, imp.PointsReplaced,
		imp.PointsDropped, imp.PointsKept)
	if imp.CoverageLossCurves > 0 {
		s += fmt.Sprintf("; ⚠️ coverage loss on %s", plural(imp.CoverageLossCurves, "curve", "curves"))
		if len(imp.Accepted) > 0 {
			s += fmt.Sprintf(" (%d acknowledged)", len(imp.Accepted))
		}
	}
	return s + "."
}

// writeMarkdownImpact writes the section: its headline, and for a run that
// changes curves the <details> block.
func writeMarkdownImpact(b *strings.Builder, s *schema.Summary) {
	imp := s.Impact
	if imp == nil {
		return
	}
	if imp.Status != schema.ImpactChanged {
		fmt.Fprintf(b, "\n%s\n", impactHeadline(imp))
		return
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n", impactHeadline(imp))
	if loss := lossCurves(imp); len(loss) > 0 {
		b.WriteString("\n**Coverage loss**")
		if imp.Guard != "" {
			fmt.Fprintf(b, " (coverage guard: %s)", imp.Guard)
		}
		b.WriteString("\n\n")
		var keys []string
		for _, c := range loss {
			mark := ""
			if c.Accepted {
				mark = " (acknowledged)"
			} else {
				keys = append(keys, c.Key)
			}
			fmt.Fprintf(b, "- `%s`%s: %s\n", c.Key, mark, mdInline(strings.Join(c.CoverageLoss, "; ")))
		}
		if len(keys) > 0 {
			fmt.Fprintf(b, "\nA deliberate replacement is acknowledged with `--accept-coverage-loss %s`, or with a "+
				"`coverageLossAccepted` entry of the run overrides.\n", strings.Join(keys, ","))
		}
	}
	for i, c := range imp.Curves {
		if i == impactCurveLimit {
			fmt.Fprintf(b, "\n… and %s (the JSON summary lists every curve).\n",
				plural(len(imp.Curves)-i, "more changed curve", "more changed curves"))
			break
		}
		writeMarkdownCurve(b, c)
	}
	b.WriteString("\n</details>\n")
}

func lossCurves(imp *schema.Impact) []schema.CurveChange {
	var out []schema.CurveChange
	for _, c := range imp.Curves {
		if len(c.CoverageLoss) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func writeMarkdownCurve(b *strings.Builder, c schema.CurveChange) {
	fmt.Fprintf(b, "\n**`%s`** — %s\n\n", c.Key, mdInline(curveSummary(c)))
	fmt.Fprintf(b, "- frontier: %s\n", mdInline(frontierSummary(c)))
	if len(c.Gained) > 0 {
		fmt.Fprintf(b, "- gained: %s\n", mdInline(gainedList(c.Gained)))
	}
	if len(c.Dropped) > 0 {
		fmt.Fprintf(b, "- dropped: %s\n", mdInline(pointList(c.Dropped)))
	}
	if len(c.Replaced) == 0 {
		return
	}
	b.WriteString("\n| conc | arm | matched by |")
	for _, m := range impactMetrics() {
		b.WriteString(" " + m.label + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(impactMetrics())) + "\n")
	for i, r := range c.Replaced {
		if i == impactReplacementLimit {
			fmt.Fprintf(b, "\n… and %s.\n", plural(len(c.Replaced)-i, "more replaced point", "more replaced points"))
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s |", concPair(r), mdInline(armPair(r)), r.MatchedBy)
		for _, m := range impactMetrics() {
			b.WriteString(" " + valueChange(m.get(r.Previous.Values), m.get(r.New.Values), m.get(r.Change)) + " |")
		}
		b.WriteString("\n")
	}
}

// curveSummary is a curve's points, arms and concurrency span before and
// after, and the runs it no longer shows.
func curveSummary(c schema.CurveChange) string {
	bf, af := c.Before, c.After
	parts := []string{fmt.Sprintf("%d → %d points (%d gained, %d replaced, %d dropped, %d kept)",
		bf.Points, af.Points, c.GainedCount(), len(c.Replaced), len(c.Dropped), c.Kept)}
	if bf.Points > 0 {
		parts = append(parts, fmt.Sprintf("arms %s → %s", armList(bf.Arms), armList(af.Arms)),
			fmt.Sprintf("conc %s → %s", span(bf), span(af)))
	} else {
		parts = append(parts, "a new curve", fmt.Sprintf("arms %s", armList(af.Arms)), fmt.Sprintf("conc %s", span(af)))
	}
	if len(c.SupersededRuns) > 0 {
		var runs []string
		for _, r := range c.SupersededRuns {
			runs = append(runs, fmt.Sprintf("%d (attempt %d)", r.RunID, r.Attempt))
		}
		parts = append(parts, "supersedes run "+strings.Join(runs, ", "))
	}
	return strings.Join(parts, "; ")
}

func armList(arms []string) string {
	if len(arms) == 0 {
		return "none"
	}
	return strings.Join(arms, ", ")
}

func span(s schema.CurveShape) string {
	if s.Points == 0 {
		return "none"
	}
	if s.ConcMin == s.ConcMax {
		return strconv.Itoa(s.ConcMin)
	}
	return fmt.Sprintf("%d–%d", s.ConcMin, s.ConcMax)
}

// frontierSummary is the frontier of each chart before and after: new
// points, lost ones (dominated or not), and the warning below 5.
func frontierSummary(c schema.CurveChange) string {
	var parts []string
	for _, f := range c.Frontiers {
		p := fmt.Sprintf("%s %d → %d", f.Chart, f.Before, f.After)
		var extra []string
		if len(f.New) > 0 {
			extra = append(extra, fmt.Sprintf("%d new on it", len(f.New)))
		}
		if len(f.Lost) > 0 {
			dom := 0
			for _, l := range f.Lost {
				if l.Dominated {
					dom++
				}
			}
			extra = append(extra, fmt.Sprintf("%d lost: %d dominated, %d not", len(f.Lost), dom, len(f.Lost)-dom))
		}
		if f.Few {
			extra = append(extra, "⚠️ fewer than 5 frontier points")
		}
		if len(extra) > 0 {
			p += " (" + strings.Join(extra, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// pointList names up to impactPointLimit points, then counts the rest.
func pointList(ps []schema.ImpactPoint) string {
	var names []string
	for i, p := range ps {
		if i == impactPointLimit {
			names = append(names, fmt.Sprintf("… and %d more", len(ps)-i))
			break
		}
		names = append(names, fmt.Sprintf("conc %d %s", p.Conc, p.Arm))
	}
	return strings.Join(names, ", ")
}

// gainedList names up to impactPointLimit gained points, by arm, then
// counts the rest.
func gainedList(gs []schema.GainedPoints) string {
	var parts []string
	shown, total := 0, 0
	for _, g := range gs {
		total += len(g.Concs)
		if shown == impactPointLimit {
			continue
		}
		var concs []string
		for _, c := range g.Concs {
			if shown == impactPointLimit {
				break
			}
			concs = append(concs, strconv.Itoa(c))
			shown++
		}
		parts = append(parts, fmt.Sprintf("%s conc %s", g.Arm, strings.Join(concs, ", ")))
	}
	s := strings.Join(parts, "; ")
	if total > shown {
		s += fmt.Sprintf(" … and %d more", total-shown)
	}
	return s
}

func concPair(r schema.Replacement) string {
	if r.Previous.Conc == r.New.Conc {
		return strconv.Itoa(r.New.Conc)
	}
	return fmt.Sprintf("%d → %d", r.Previous.Conc, r.New.Conc)
}

func armPair(r schema.Replacement) string {
	if r.Previous.Arm == r.New.Arm {
		return r.New.Arm
	}
	return r.Previous.Arm + " → " + r.New.Arm
}

// valueChange is "previous → new (+x.x %)", "–" when neither is known.
func valueChange(prev, cur, rel *float64) string {
	if prev == nil && cur == nil {
		return "–"
	}
	s := number(prev) + " → " + number(cur)
	if rel != nil {
		s += fmt.Sprintf(" (%+.1f %%)", *rel*100)
	}
	return s
}

// number is v with four significant digits (no exponent), "–" for none.
func number(v *float64) string {
	if v == nil {
		return "–"
	}
	x := *v
	if math.Abs(x) >= 1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// ImpactText is the impact section as console text, for a write that is
// not a run's ingest (an apply of the run overrides): its headline, and per
// changed curve its summary, frontier, coverage loss and top changes.
func ImpactText(imp *schema.Impact) string {
	var b strings.Builder
	writeTextImpact(&b, &schema.Summary{Impact: imp})
	return b.String()
}

// writeTextImpact writes the section as console text: the headline, then
// per listed curve its summary, frontier, coverage loss and top changes.
func writeTextImpact(b *strings.Builder, s *schema.Summary) {
	imp := s.Impact
	if imp == nil {
		return
	}
	b.WriteString(impactHeadline(imp) + "\n")
	for i, c := range imp.Curves {
		if i == impactCurveLimit {
			fmt.Fprintf(b, "  … and %s (the JSON summary lists every curve)\n",
				plural(len(imp.Curves)-i, "more changed curve", "more changed curves"))
			break
		}
		fmt.Fprintf(b, "  %s: %s\n", c.Key, curveSummary(c))
		fmt.Fprintf(b, "    frontier: %s\n", frontierSummary(c))
		if len(c.CoverageLoss) > 0 {
			mark := "⚠️ coverage loss"
			if c.Accepted {
				mark += " (acknowledged)"
			}
			fmt.Fprintf(b, "    %s: %s\n", mark, strings.Join(c.CoverageLoss, "; "))
		}
		for j, r := range c.Replaced {
			if j == impactReplacementLimit {
				fmt.Fprintf(b, "    … and %s\n", plural(len(c.Replaced)-j, "more replaced point", "more replaced points"))
				break
			}
			var vals []string
			for _, m := range impactMetrics() {
				vals = append(vals, m.label+" "+valueChange(m.get(r.Previous.Values), m.get(r.New.Values), m.get(r.Change)))
			}
			fmt.Fprintf(b, "    conc %s %s (by %s): %s\n", concPair(r), armPair(r), r.MatchedBy, strings.Join(vals, ", "))
		}
		if len(c.Gained) > 0 {
			fmt.Fprintf(b, "    gained: %s\n", gainedList(c.Gained))
		}
		if len(c.Dropped) > 0 {
			fmt.Fprintf(b, "    dropped: %s\n", pointList(c.Dropped))
		}
	}
	if keys := openLossKeys(imp); len(keys) > 0 {
		fmt.Fprintf(b, "  acknowledge a deliberate replacement with --accept-coverage-loss %s, or a coverageLossAccepted entry of the run overrides\n",
			strings.Join(keys, ","))
	}
}

func openLossKeys(imp *schema.Impact) []string {
	var keys []string
	for _, c := range imp.Curves {
		if len(c.CoverageLoss) > 0 && !c.Accepted {
			keys = append(keys, c.Key)
		}
	}
	return keys
}
