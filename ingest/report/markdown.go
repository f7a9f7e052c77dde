package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Markdown renders s as the PR comment and GitHub Actions job summary of
// docs/report.md: the hidden marker, the heading, the links, the table, the
// stats line, notes, the unmapped values and failures, the footer, and the
// Chinese section. Values that come from input are escaped so they render as
// literal text. s must not be nil.
func Markdown(s *schema.Summary) string {
	var b strings.Builder
	o := outcomeOf(s)

	fmt.Fprintf(&b, "<!-- ingest-report source-run=%d -->\n", s.Run.SourceRunID)
	emoji, sentence := headingEN(s, mdInline)
	fmt.Fprintf(&b, "Ingest report — %s %s\n", emoji, sentence)
	if links := markdownLinks(s.Links); links != "" {
		fmt.Fprintf(&b, "\n%s\n", links)
	}
	b.WriteString("\n")
	writeMarkdownTable(&b, s.Rows)
	fmt.Fprintf(&b, "\n_{%s}_\n", statsLine(s.Stats))
	writeMarkdownNotes(&b, s.Notes)
	writeMarkdownDetails(&b, s)
	writeMarkdownPowerWarnings(&b, s)
	fmt.Fprintf(&b, "\n%s\n", footerEN(o))

	b.WriteString("\n中文\n\n")
	fmt.Fprintf(&b, "Ingest 报告 — %s\n", headingZH(s, mdInline))
	fmt.Fprintf(&b, "\n%s\n", footerZH(o))
	return b.String()
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
func writeMarkdownNotes(b *strings.Builder, notes []string) {
	var lines []string
	for _, n := range notes {
		if e := mdInline(n); e != "" {
			lines = append(lines, "- "+e)
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nNotes:\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}

// writeMarkdownDetails writes the collapsible block of unmapped values and
// failures, when there is anything to list.
func writeMarkdownDetails(b *strings.Builder, s *schema.Summary) {
	nUnmapped, nFailures := unmappedValueCount(s.Unmapped), len(s.Failures)
	if nUnmapped == 0 && nFailures == 0 {
		return
	}
	var summary []string
	if nUnmapped > 0 {
		summary = append(summary, plural(nUnmapped, "unmapped value", "unmapped values"))
	}
	if nFailures > 0 {
		summary = append(summary, plural(nFailures, "failure", "failures"))
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n", strings.Join(summary, ", "))

	if nUnmapped > 0 {
		b.WriteString("\n**Unmapped values** (add them to the alias tables to ingest their rows)\n\n")
		for _, k := range unmappedKinds(s.Unmapped) {
			fmt.Fprintf(b, "- %s: %s\n", k.name, valueList(k.values, markdownListLimit, mdInline, "_(empty)_"))
		}
	}
	if nFailures > 0 {
		b.WriteString("\n**Failures**\n\n")
		shown := s.Failures[:min(markdownListLimit, nFailures)]
		for _, f := range shown {
			fmt.Fprintf(b, "- %s\n", failureLine(f, mdInline))
		}
		if more := nFailures - len(shown); more > 0 {
			fmt.Fprintf(b, "- … and %d more\n", more)
		}
	}
	b.WriteString("\n</details>\n")
}
