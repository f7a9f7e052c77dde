package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
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

// impactMetric is one value a replacement compares, as the report names
// it with its unit; scale converts the stored value to that unit.
type impactMetric struct {
	label string
	get   func(schema.PointValues) *float64
	scale float64
}

func impactMetrics() []impactMetric {
	return []impactMetric{
		{"tput/GPU (tok/s/GPU)", func(v schema.PointValues) *float64 { return v.TputPerGPU }, 1},
		{"output tput/GPU (tok/s/GPU)", func(v schema.PointValues) *float64 { return v.OutputTputPerGPU }, 1},
		{"interactivity (tok/s/user)", func(v schema.PointValues) *float64 { return v.MedianIntvty }, 1},
		{"p90 E2EL (s)", func(v schema.PointValues) *float64 { return v.P90E2EL }, 1},
		{"TTFT (ms)", func(v schema.PointValues) *float64 { return v.MedianTTFT }, 1000},
	}
}

// scaled is v in the metric's unit.
func (m impactMetric) scaled(v *float64) *float64 {
	if v == nil {
		return nil
	}
	x := *v * m.scale
	return &x
}

// change is the metric's "previous → new (+x.x %)" for r.
func (m impactMetric) change(r schema.Replacement) string {
	return valueChange(m.scaled(m.get(r.Previous.Values)), m.scaled(m.get(r.New.Values)), m.get(r.Change))
}

// openCoverageLoss is the number of curves that lose coverage without
// acknowledgement.
func openCoverageLoss(imp *schema.Impact) int {
	if imp == nil {
		return 0
	}
	return imp.CoverageLossCurves - len(imp.Accepted)
}

// headingWithImpact is headingEN with what the dashboard will make of a
// run that was (or, dry, would be) written: a run without a conclusion it
// will not show, the curves it shrinks, the published points an
// append-only run touches. Anything that needs a person (actionsOf) turns
// ✅ into ⚠️.
func headingWithImpact(s *schema.Summary, esc func(string) string) (string, string) {
	emoji, sentence := headingEN(s, esc)
	if s.Status == schema.StatusAborted || s.Status == schema.StatusPurged {
		return emoji, sentence
	}
	if s.Details.NoConclusion {
		sentence += " The dashboard will not show this run: it has no conclusion."
	}
	if n := openCoverageLoss(s.Impact); n > 0 {
		sentence += fmt.Sprintf(" Coverage loss on %s.", wording.Plural(n, "published curve", "published curves"))
	}
	if touched := appendOnlyTouched(s.Impact); touched > 0 {
		sentence += fmt.Sprintf(" The append-only run touches %s.", wording.Plural(touched, "published point", "published points"))
	}
	if emoji == "✅" && len(actionsOf(s, esc)) > 0 {
		emoji = "⚠️"
	}
	return emoji, sentence
}

// withImpactZH is headingWithImpact for the Chinese heading (which starts
// with its emoji).
func withImpactZH(s *schema.Summary, heading string) string {
	if s.Status == schema.StatusAborted || s.Status == schema.StatusPurged {
		return heading
	}
	extra := ""
	if s.Details.NoConclusion {
		extra += " 该运行没有 conclusion，dashboard 不会显示。"
	}
	if n := openCoverageLoss(s.Impact); n > 0 {
		extra += fmt.Sprintf(" %d 条已发布曲线覆盖缩小。", n)
	}
	if touched := appendOnlyTouched(s.Impact); touched > 0 {
		extra += fmt.Sprintf(" append-only 运行改动了 %d 个已发布的点。", touched)
	}
	if rest, ok := strings.CutPrefix(heading, "✅"); ok && len(actionsOf(s, mdInline)) > 0 {
		heading = "⚠️" + rest
	}
	return heading + extra
}

// appendOnlyTouched is the number of published points an append-only run
// touched.
func appendOnlyTouched(imp *schema.Impact) int {
	if imp == nil || imp.AppendOnly == nil {
		return 0
	}
	return len(imp.AppendOnly.Touched)
}

// impactHeadline is the one-line summary of the section.
func impactHeadline(imp *schema.Impact) string {
	switch imp.Status {
	case schema.ImpactUnknown:
		return "Dashboard impact: unknown (latest_benchmarks was not updated in the run's transaction)."
	case schema.ImpactUnchanged:
		if imp.CurvesTouched > 0 {
			return fmt.Sprintf("Dashboard impact: nothing changes (%s touched, every point as before).",
				wording.Plural(imp.CurvesTouched, "curve", "curves"))
		}
		return "Dashboard impact: nothing changes."
	}
	s := fmt.Sprintf("Dashboard impact: %s of %d touched change — %d gained, %d replaced, %d dropped, %d kept",
		wording.Plural(imp.CurvesChanged, "curve", "curves"), imp.CurvesTouched, imp.PointsGained, imp.PointsReplaced,
		imp.PointsDropped, imp.PointsKept)
	if imp.CoverageLossCurves > 0 {
		s += fmt.Sprintf("; coverage loss on %s", wording.Plural(imp.CoverageLossCurves, "curve", "curves"))
		if len(imp.Accepted) > 0 {
			s += fmt.Sprintf(" (%d acknowledged)", len(imp.Accepted))
		}
	}
	return s + "."
}

// listCaps bound the lists of the impact and eval sections: short in the
// PR comment, long in the job summary and the full Markdown, whole in the
// JSON summary.
type listCaps struct {
	lossCurves, curves, replaced, evals int
	// items bounds the other lists: notes, unmapped values of a kind,
	// failures, warnings.
	items int
}

// capsFor is the caps of a rendering bounded by limit (0: unbounded).
func capsFor(limit int) listCaps {
	if limit > 0 && limit <= CommentLimit {
		return listCaps{lossCurves: 10, curves: 3, replaced: 3, evals: 10, items: 10}
	}
	return listCaps{lossCurves: 1000, curves: impactCurveLimit, replaced: impactReplacementLimit, evals: 1000, items: markdownListLimit}
}

// fullList says where a capped list is whole.
func fullList(runID int64) string {
	return fmt.Sprintf("(full list: `ingest report --run-id %d --format json`, step summary)", runID)
}

// writeMarkdownImpact writes the section: its headline, the coverage loss
// table and the append-only check unfolded, and for a run that changes
// curves the <details> block of the curves that changed most.
func writeMarkdownImpact(b *strings.Builder, s *schema.Summary, caps listCaps) {
	imp := s.Impact
	if imp == nil {
		return
	}
	if imp.AppendOnly != nil && len(imp.AppendOnly.Touched) == 0 {
		fmt.Fprintf(b, "\nAppend-only: %s added, 0 existing points touched.\n", wording.Plural(imp.AppendOnly.Added, "point", "points"))
	}
	if imp.Status != schema.ImpactChanged {
		fmt.Fprintf(b, "\n%s\n", impactHeadline(imp))
		return
	}
	writeMarkdownLossTable(b, s, caps)
	writeMarkdownTouched(b, s, caps)
	writeMarkdownCharts(b, imp)
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n", impactHeadline(imp))
	for i, c := range imp.Curves {
		if i == caps.curves {
			fmt.Fprintf(b, "\n… and %s %s.\n", wording.Plural(len(imp.Curves)-i, "more changed curve", "more changed curves"), fullList(s.Run.SourceRunID))
			break
		}
		writeMarkdownCurve(b, c, caps.replaced)
	}
	b.WriteString("\n</details>\n")
}

// writeMarkdownLossTable writes the curves that lose coverage as a short
// table, the worst first.
func writeMarkdownLossTable(b *strings.Builder, s *schema.Summary, caps listCaps) {
	loss := lossCurves(s.Impact)
	if len(loss) == 0 {
		return
	}
	b.WriteString("\n**Coverage loss**")
	if g := s.Impact.Guard; g != "" {
		fmt.Fprintf(b, " (coverage guard: %s)", g)
	}
	b.WriteString("\n\n| curve | what is lost |\n|---|---|\n")
	for i, c := range loss {
		if i == caps.lossCurves {
			fmt.Fprintf(b, "\n… and %s %s.\n", wording.Plural(len(loss)-i, "more curve", "more curves"), fullList(s.Run.SourceRunID))
			break
		}
		mark := ""
		if c.Accepted {
			mark = " (acknowledged)"
		}
		fmt.Fprintf(b, "| `%s`%s | %s |\n", c.Key, mark, mdInline(lossSummary(c)))
	}
	if openCoverageLoss(s.Impact) > 0 {
		fmt.Fprintf(b, "\nA deliberate replacement is acknowledged with %s, or with a "+
			"`coverageLossAccepted` entry of the run overrides.\n", acceptHint(s.Impact))
	}
}

// writeMarkdownTouched writes the published points an append-only run
// touched.
func writeMarkdownTouched(b *strings.Builder, s *schema.Summary, caps listCaps) {
	if appendOnlyTouched(s.Impact) == 0 {
		return
	}
	touched := s.Impact.AppendOnly.Touched
	fmt.Fprintf(b, "\n**Append-only run touches %s** (%s added)\n\n| curve | conc | arm | what happened |\n|---|---|---|---|\n",
		wording.Plural(len(touched), "published point", "published points"), wording.Plural(s.Impact.AppendOnly.Added, "point", "points"))
	for i, p := range touched {
		if i == caps.lossCurves {
			fmt.Fprintf(b, "\n… and %s %s.\n", wording.Plural(len(touched)-i, "more point", "more points"), fullList(s.Run.SourceRunID))
			break
		}
		fmt.Fprintf(b, "| `%s` | %d | %s | %s |\n", p.Curve, p.Conc, mdInline(p.Arm), p.How)
	}
}

// lossCurves are the curves that lose coverage, the worst first: a curve
// no longer shown, then by the published points lost, then by the kinds
// of loss; open losses before acknowledged ones.
func lossCurves(imp *schema.Impact) []schema.CurveChange {
	var out []schema.CurveChange
	for _, c := range imp.Curves {
		if len(c.CoverageLoss) > 0 {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b schema.CurveChange) int {
		return cmp.Or(cmp.Compare(lossRank(a), lossRank(b)), cmp.Compare(len(lostPoints(b)), len(lostPoints(a))),
			cmp.Compare(len(b.CoverageLoss), len(a.CoverageLoss)))
	})
	return out
}

// lossRank orders the kinds of loss: an open loss of the whole curve
// first, then other open losses, then acknowledged ones.
func lossRank(c schema.CurveChange) int {
	r := 0
	if c.Accepted {
		r += 2
	}
	if c.After.Points > 0 {
		r++
	}
	return r
}

// lostPoints are the published points a curve no longer shows with no
// re-measurement at the same concurrency and arm.
func lostPoints(c schema.CurveChange) []schema.ImpactPoint {
	lost := slices.Clone(c.Dropped)
	for _, r := range c.Replaced {
		if r.MatchedBy != schema.MatchedByConcurrency || r.Previous.Arm != r.New.Arm {
			lost = append(lost, r.Previous)
		}
	}
	slices.SortStableFunc(lost, func(x, y schema.ImpactPoint) int {
		return cmp.Or(strings.Compare(x.Arm, y.Arm), cmp.Compare(x.Conc, y.Conc))
	})
	return lost
}

// lossSummary says in a few words what a curve loses: the whole curve, or
// its lost points (the first three named), arms, concurrency span, and the
// ranges and frontiers no point after reaches.
func lossSummary(c schema.CurveChange) string {
	if c.After.Points == 0 {
		return "the whole curve"
	}
	var parts []string
	if lost := lostPoints(c); len(lost) > 0 {
		p := wording.Plural(len(lost), "point", "points") + " (" + pointList(lost[:min(3, len(lost))])
		if len(lost) > 3 {
			p += fmt.Sprintf(", +%d", len(lost)-3)
		}
		parts = append(parts, p+")")
	}
	var gone []string
	for _, a := range c.Before.Arms {
		if !slices.Contains(c.After.Arms, a) {
			gone = append(gone, a)
		}
	}
	if len(gone) > 0 {
		parts = append(parts, "arm "+strings.Join(gone, ", "))
	}
	if c.After.ConcMin > c.Before.ConcMin || c.After.ConcMax < c.Before.ConcMax {
		parts = append(parts, "conc "+span(c.Before)+" → "+span(c.After))
	}
	for _, l := range c.CoverageLoss {
		for _, kind := range []string{" range", " frontier"} {
			if name, _, ok := strings.Cut(l, kind); ok && !strings.Contains(name, " ") {
				parts = append(parts, name+kind)
			}
		}
	}
	return strings.Join(parts, "; ")
}

func writeMarkdownCurve(b *strings.Builder, c schema.CurveChange, replacedCap int) {
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
	b.WriteString("\n| conc | arm |")
	for _, m := range impactMetrics() {
		b.WriteString(" " + m.label + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(impactMetrics())) + "\n")
	for i, r := range c.Replaced {
		if i == replacedCap {
			fmt.Fprintf(b, "\n… and %s.\n", wording.Plural(len(c.Replaced)-i, "more replaced point", "more replaced points"))
			break
		}
		fmt.Fprintf(b, "| %s | %s |", concCell(r), mdInline(armPair(r)))
		for _, m := range impactMetrics() {
			b.WriteString(" " + m.change(r) + " |")
		}
		b.WriteString("\n")
	}
}

// concCell is the concurrency of a replacement, and how it was matched
// when not by concurrency.
func concCell(r schema.Replacement) string {
	if r.MatchedBy == schema.MatchedByConcurrency {
		return concPair(r)
	}
	return concPair(r) + " (by " + r.MatchedBy + ")"
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

// number is v with three significant digits, never an exponent (so the
// values of one column read alike: 1610, 278, 14.4, 0.720), "–" for none.
func number(v *float64) string {
	if v == nil {
		return "–"
	}
	x := *v
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	digits := 3 - int(math.Floor(math.Log10(math.Abs(x)))) - 1
	if digits <= 0 {
		p := math.Pow(10, float64(-digits))
		return strconv.FormatFloat(math.Round(x/p)*p, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
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
				wording.Plural(len(imp.Curves)-i, "more changed curve", "more changed curves"))
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
				fmt.Fprintf(b, "    … and %s\n", wording.Plural(len(c.Replaced)-j, "more replaced point", "more replaced points"))
				break
			}
			var vals []string
			for _, m := range impactMetrics() {
				vals = append(vals, m.label+" "+m.change(r))
			}
			fmt.Fprintf(b, "    conc %s %s: %s\n", concCell(r), armPair(r), strings.Join(vals, ", "))
		}
		if len(c.Gained) > 0 {
			fmt.Fprintf(b, "    gained: %s\n", gainedList(c.Gained))
		}
		if len(c.Dropped) > 0 {
			fmt.Fprintf(b, "    dropped: %s\n", pointList(c.Dropped))
		}
	}
	if openCoverageLoss(imp) > 0 && imp.LossToken != "" {
		fmt.Fprintf(b, "  acknowledge a deliberate replacement with --accept-coverage-loss %s (or all), or a coverageLossAccepted entry of the run overrides\n",
			imp.LossToken)
	}
	if imp.AppendOnly != nil {
		fmt.Fprintf(b, "  append-only: %s added, %s touched\n", wording.Plural(imp.AppendOnly.Added, "point", "points"),
			wording.Plural(len(imp.AppendOnly.Touched), "existing point", "existing points"))
	}
}
