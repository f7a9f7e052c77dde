package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// serverMetricWarningLine is "artifact / file: field published P, derived D (±X %)".
func serverMetricWarningLine(w schema.ServerMetricWarning, esc func(string) string) string {
	return fmt.Sprintf("%s / %s: %s published %s, derived %s (%s %%)", esc(w.Artifact), esc(w.File), esc(w.Field),
		strconv.FormatFloat(w.Published, 'g', 10, 64), strconv.FormatFloat(w.Derived, 'g', 10, 64),
		strconv.FormatFloat(w.RelDiff*100, 'f', 1, 64))
}

// writeMarkdownServerMetricWarnings writes the collapsible list of published
// AgentX server metrics that the derived values contradict, when there is
// any.
func writeMarkdownServerMetricWarnings(b *strings.Builder, s *schema.Summary, bud *budget) {
	n := len(s.ServerMetricWarnings)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", plural(n, "server metric warning", "server metric warnings"))
	shown := s.ServerMetricWarnings[:min(markdownListLimit, n)]
	listed := 0
	for i, w := range shown {
		line := "- " + serverMetricWarningLine(w, mdInline) + "\n"
		if !bud.take(listServerMetricWarnings, len(line)) {
			bud.omit(listServerMetricWarnings, len(shown)-i-1)
			break
		}
		b.WriteString(line)
		listed++
	}
	if more := n - listed; more > 0 {
		fmt.Fprintf(b, "- … and %d more\n", more)
	}
	b.WriteString("\n</details>\n")
}

// writeTextServerMetricWarnings lists up to ten server metric warnings.
func writeTextServerMetricWarnings(b *strings.Builder, s *schema.Summary) {
	n := len(s.ServerMetricWarnings)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "server metric warnings (%d):\n", n)
	shown := s.ServerMetricWarnings[:min(textListLimit, n)]
	for _, w := range shown {
		fmt.Fprintf(b, "  %s\n", serverMetricWarningLine(w, plainInline))
	}
	if more := n - len(shown); more > 0 {
		fmt.Fprintf(b, "  … and %d more\n", more)
	}
}
