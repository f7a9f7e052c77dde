package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// powerWarningLine is "artifact / file: field published P, telemetry M (±D %)".
func powerWarningLine(w schema.PowerWarning, esc func(string) string) string {
	return fmt.Sprintf("%s / %s: %s published %s, telemetry %s (%s %%)", esc(w.Artifact), esc(w.File), esc(w.Field),
		strconv.FormatFloat(w.Published, 'g', 8, 64), strconv.FormatFloat(w.Measured, 'g', 8, 64),
		strconv.FormatFloat(w.RelDiff*100, 'f', 1, 64))
}

// writeMarkdownPowerWarnings writes the collapsible list of published power
// that the stored telemetry contradicts, when there is any.
func writeMarkdownPowerWarnings(b *strings.Builder, s *schema.Summary, bud *budget) {
	n := len(s.PowerWarnings)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", plural(n, "power warning", "power warnings"))
	shown := s.PowerWarnings[:min(markdownListLimit, n)]
	listed := 0
	for i, w := range shown {
		line := "- " + powerWarningLine(w, mdInline) + "\n"
		if !bud.take(listPowerWarnings, len(line)) {
			bud.omit(listPowerWarnings, len(shown)-i-1)
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

// writeTextPowerWarnings lists up to ten power warnings.
func writeTextPowerWarnings(b *strings.Builder, s *schema.Summary) {
	n := len(s.PowerWarnings)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "power warnings (%d):\n", n)
	shown := s.PowerWarnings[:min(textListLimit, n)]
	for _, w := range shown {
		fmt.Fprintf(b, "  %s\n", powerWarningLine(w, plainInline))
	}
	if more := n - len(shown); more > 0 {
		fmt.Fprintf(b, "  … and %d more\n", more)
	}
}
