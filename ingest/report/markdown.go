package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// CommentLimit is the longest body GitHub accepts for an issue or pull
// request comment: 65,536 characters. Comment stays within it counting
// bytes, which are never fewer than characters (however GitHub counts them).
const CommentLimit = 65536

// StepSummaryLimit is the largest GitHub Actions job summary a step may
// write: 1 MiB.
const StepSummaryLimit = 1 << 20

// Markdown renders s as docs/report.md describes it: the hidden marker, the
// heading, the links, the table, the stats line, notes, the unmapped values
// and failures, the footer, and the Chinese section. Values that come from
// input are escaped so they render as literal text and notify or link
// nothing. s must not be nil. It is not bounded: the PR comment is Comment,
// the job summary StepSummary.
func Markdown(s *schema.Summary) string { return renderMarkdown(s, 0) }

// Comment is Markdown cut to fit CommentLimit: the marker, the heading,
// the links, the table, the stats line and the footers are always whole;
// notes, unmapped values, failures and power warnings are listed while
// they fit, and when any is left out a note says how many of each and
// where the full report is.
func Comment(s *schema.Summary) string { return renderMarkdown(s, CommentLimit) }

// StepSummary is Markdown cut, like Comment, to fit StepSummaryLimit.
func StepSummary(s *schema.Summary) string { return renderMarkdown(s, StepSummaryLimit) }

// cutNoteReserve is what the body keeps free for the closing tags of the
// lists and the note that says what was cut.
const cutNoteReserve = 2048

func renderMarkdown(s *schema.Summary, limit int) string {
	o := outcomeOf(s)
	var head, tail strings.Builder
	head.WriteString(Marker(s) + "\n")
	writeMarkdownFirstScreen(&head, s)
	if links := markdownLinks(s.Links); links != "" {
		fmt.Fprintf(&head, "\n%s\n", links)
	}
	writeMarkdownPublication(&head, s)
	head.WriteString("\n")
	writeMarkdownTable(&head, s.Rows)
	fmt.Fprintf(&head, "\n_{%s}_\n", statsLine(s.Stats))
	caps := capsFor(limit)
	writeMarkdownImpact(&head, s, caps)
	writeMarkdownEvalEvidence(&head, s, caps)

	fmt.Fprintf(&tail, "\n%s\n", footerEN(o))
	tail.WriteString("\n中文\n\n")
	fmt.Fprintf(&tail, "Ingest 报告 — %s\n", withImpactZH(s, headingZH(s, mdInline)))
	fmt.Fprintf(&tail, "\n%s\n", footerZH(o))

	bud := &budget{items: caps.items, more: fullList(s.Run.SourceRunID)}
	if limit > 0 {
		bud.limited = true
		bud.left = limit - head.Len() - tail.Len() - cutNoteReserve
	}
	var b strings.Builder
	b.WriteString(head.String())
	writeMarkdownNotes(&b, s.Notes, bud)
	writeMarkdownDetails(&b, s, bud)
	writeMarkdownWarnings(&b, s.PowerWarnings, "power warning", "power warnings", listPowerWarnings, bud, powerWarningLine)
	writeMarkdownWarnings(&b, s.ServerMetricWarnings, "server metric warning", "server metric warnings", listServerMetricWarnings,
		bud, serverMetricWarningLine)
	if bud.cut {
		writeCutNote(&b, s, limit, bud)
	}
	b.WriteString(tail.String())
	return b.String()
}

// budget is the room left for the lists of a bounded rendering. Once an
// item does not fit, no later one is taken either (the lists show a
// prefix of themselves), and the items left out are counted by kind.
type budget struct {
	// items bounds the items of each list; more says where the lists are
	// whole.
	items   int
	more    string
	limited bool
	left    int
	cut     bool
	omitted [5]int // by listKind
}

// listKind is a kind of list item a bounded rendering may leave out.
type listKind int

const (
	listNotes listKind = iota
	listUnmapped
	listFailures
	listPowerWarnings
	listServerMetricWarnings
)

// take reports whether n more bytes fit; it counts them when they do, and
// otherwise counts one item of kind left out.
func (b *budget) take(kind listKind, n int) bool {
	if !b.limited {
		return true
	}
	if !b.cut && n <= b.left {
		b.left -= n
		return true
	}
	b.cut = true
	b.omitted[kind]++
	return false
}

// omit counts n items of kind left out without trying them.
func (b *budget) omit(kind listKind, n int) {
	if n > 0 {
		b.cut = true
		b.omitted[kind] += n
	}
}

// writeCutNote says what a bounded rendering left out and where the whole
// report is.
func writeCutNote(b *strings.Builder, s *schema.Summary, limit int, bud *budget) {
	var parts []string
	for _, k := range []struct {
		kind      listKind
		one, many string
	}{
		{listNotes, "note", "notes"}, {listUnmapped, "unmapped value", "unmapped values"},
		{listFailures, "failure", "failures"}, {listPowerWarnings, "power warning", "power warnings"},
		{listServerMetricWarnings, "server metric warning", "server metric warnings"},
	} {
		if n := bud.omitted[k.kind]; n > 0 {
			parts = append(parts, wording.Plural(n, k.one, k.many))
		}
	}
	where := "the job summary of the ingest workflow run, "
	if limit >= StepSummaryLimit {
		where = "" // this is the job summary
	}
	fmt.Fprintf(b, "\n> ✂️ Cut to fit GitHub's limit of %s characters: %s not shown here. "+
		"The headline, the table and the counts above are complete. The full report: %s"+
		"`ingest report --run-id %d` (`--format md`, `text` or `json`), and the JSON summary (`--summary-json`).\n",
		thousands(limit), strings.Join(parts, ", "), where, s.Run.SourceRunID)
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// markdownLinks is the links line built from the links that are set, or ""
// when none is.
func markdownLinks(l schema.Links) string {
	var parts []string
	for _, link := range []struct{ label, url string }{
		{"Ingest workflow", l.IngestRun},
		{"Merge Ingest run", l.MergeRun},
		{"Benchmark source run", l.SourceRun},
	} {
		if u, ok := mdURL(link.url); ok {
			parts = append(parts, "["+link.label+"]("+u+")")
		}
	}
	return strings.Join(parts, " · ")
}

// writeMarkdownTable writes the four-row table with column-aligned cells.
func writeMarkdownTable(b *strings.Builder, rows schema.Rows) {
	grid := tableGrid(rows)
	widths := columnWidths(grid)
	writeLine := func(cells []string) {
		for i, cell := range cells {
			b.WriteString("| " + pad(cell, widths[i]) + " ")
		}
		b.WriteString("|\n")
	}
	writeLine(grid[0])
	for _, w := range widths {
		b.WriteString("|" + strings.Repeat("-", w+2))
	}
	b.WriteString("|\n")
	for _, cells := range grid[1:] {
		writeLine(cells)
	}
}

// writeMarkdownNotes writes the notes as a short list, when there are any.
func writeMarkdownNotes(b *strings.Builder, notes []string, bud *budget) {
	var lines []string
	for i, n := range notes {
		e := mdInline(n)
		if e == "" {
			continue
		}
		if len(lines) == bud.items {
			lines = append(lines, fmt.Sprintf("- … and %d more %s", nonEmpty(notes[i:]), bud.more))
			break
		}
		line := "- " + e
		if !bud.take(listNotes, len(line)+1) {
			bud.omit(listNotes, nonEmpty(notes[i+1:]))
			break
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nNotes:\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}

// nonEmpty counts the notes that render as something.
func nonEmpty(notes []string) int {
	n := 0
	for _, v := range notes {
		if oneLine(v, maxInlineRunes) != "" {
			n++
		}
	}
	return n
}

// totalFailures is the number of failures, listed in the summary or
// counted past its list's bound.
func totalFailures(s *schema.Summary) int64 {
	return int64(len(s.Failures)) + s.Details.FailuresNotListed
}

// writeMarkdownDetails writes the collapsible block of unmapped values and
// failures, when there is anything to list.
func writeMarkdownDetails(b *strings.Builder, s *schema.Summary, bud *budget) {
	nUnmapped, nFailures := unmappedValueCount(s.Unmapped), totalFailures(s)
	if nUnmapped == 0 && nFailures == 0 {
		return
	}
	var summary []string
	if nUnmapped > 0 {
		summary = append(summary, wording.Plural(nUnmapped, "unmapped value", "unmapped values"))
	}
	if nFailures > 0 {
		summary = append(summary, wording.Plural(nFailures, "failure", "failures"))
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n", strings.Join(summary, ", "))

	if nUnmapped > 0 {
		b.WriteString("\n**Unmapped values** (add them to the alias tables to ingest their rows)\n\n")
		for _, k := range unmappedKinds(s.Unmapped) {
			if line, ok := boundedValueList(k.values, bud.items, bud); ok {
				fmt.Fprintf(b, "- %s: %s\n", k.name, line)
			}
		}
	}
	if len(s.Failures) > 0 {
		b.WriteString("\n**Failures**\n\n")
		listed := 0
		for i, f := range s.Failures[:min(bud.items, len(s.Failures))] {
			line := "- " + failureLine(f, mdInline) + "\n"
			if !bud.take(listFailures, len(line)) {
				bud.omit(listFailures, min(bud.items, len(s.Failures))-i-1)
				break
			}
			b.WriteString(line)
			listed++
		}
		if more := nFailures - int64(listed); more > 0 {
			fmt.Fprintf(b, "- … and %d more %s\n", more, bud.more)
		}
	}
	b.WriteString("\n</details>\n")
}

// boundedValueList is valueList for Markdown within bud: the values that
// fit, then "… and N more" for the rest. It reports false when not even
// the first value fit (the line is left out).
func boundedValueList(values []string, limit int, bud *budget) (string, bool) {
	shown := values[:min(limit, len(values))]
	var parts []string
	for i, v := range shown {
		e := mdInline(v)
		if e == "" {
			e = "_(empty)_"
		}
		if !bud.take(listUnmapped, len(e)+2) {
			bud.omit(listUnmapped, len(shown)-i-1)
			break
		}
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return "", false
	}
	line := strings.Join(parts, ", ")
	if more := len(values) - len(parts); more > 0 {
		line += fmt.Sprintf(" … and %d more %s", more, bud.more)
	}
	return line, true
}
