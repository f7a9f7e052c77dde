package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// publicationListLimit is how many differences of a promotion are listed.
const publicationListLimit = 10

// publicationLines say whether the ingest was staged or a promotion and,
// for a promotion, how its inputs compare with the staged ingest: a first
// line, then one line per difference (at most publicationListLimit).
// inline escapes values from input. None for an ingest that is neither.
func publicationLines(s *schema.Summary, inline func(string) string) []string {
	p := s.Publication
	if p == nil {
		return nil
	}
	target := inline(s.Target)
	if p.Kind == schema.PublicationStaged {
		return []string{fmt.Sprintf("staged ingest into the %s database, not production: promote it by ingesting the same run into production", target)}
	}
	head := fmt.Sprintf("promotion into the %s database: ", target)
	staged := fmt.Sprintf("staged ingest #%d (%s)", p.StagedIngestID, inline(p.StagedTarget))
	switch {
	case p.NotCompared != "":
		return []string{head + "not compared with a staged ingest: " + inline(p.NotCompared)}
	case p.SameInputs:
		return []string{head + "same inputs as " + staged}
	}
	counts := map[string]int{}
	for _, d := range p.Differences {
		counts[d.Change]++
	}
	var parts []string
	for _, c := range []string{"added", "removed", "changed", "unknown"} {
		if n := counts[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c))
		}
	}
	lines := []string{fmt.Sprintf("%sinputs differ from %s: %s", head, staged, strings.Join(parts, ", "))}
	for i, d := range p.Differences {
		if i == publicationListLimit {
			lines = append(lines, fmt.Sprintf("… and %d more", len(p.Differences)-i))
			break
		}
		l := d.Change + " " + inline(d.Artifact)
		if d.Detail != "" {
			l += ": " + inline(d.Detail)
		}
		lines = append(lines, l)
	}
	return lines
}

// writeTextPublication writes the publication lines of a text report.
func writeTextPublication(b *strings.Builder, s *schema.Summary) {
	for i, l := range publicationLines(s, plainInline) {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(l + "\n")
	}
}

// writeMarkdownPublication writes the publication lines of a Markdown
// report: the first as a paragraph, the differences as a list.
func writeMarkdownPublication(b *strings.Builder, s *schema.Summary) {
	lines := publicationLines(s, mdInline)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**%s**\n", lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "- %s\n", l)
	}
}
