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

// writeMarkdownServerMetricWarnings writes the collapsible list of server metric warnings, when
// there is any.
func writeMarkdownServerMetricWarnings(b *strings.Builder, s *schema.Summary, bud *budget) {
	writeMarkdownWarnings(b, s.ServerMetricWarnings, "server metric warning", "server metric warnings", listServerMetricWarnings, bud, serverMetricWarningLine)
}

// writeTextServerMetricWarnings lists up to ten server metric warnings.
func writeTextServerMetricWarnings(b *strings.Builder, s *schema.Summary) {
	writeTextWarnings(b, s.ServerMetricWarnings, "server metric warnings", serverMetricWarningLine)
}
