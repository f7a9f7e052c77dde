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

// writeMarkdownPowerWarnings writes the collapsible list of power warnings, when
// there is any.
func writeMarkdownPowerWarnings(b *strings.Builder, s *schema.Summary, bud *budget) {
	writeMarkdownWarnings(b, s.PowerWarnings, "power warning", "power warnings", listPowerWarnings, bud, powerWarningLine)
}

// writeTextPowerWarnings lists up to ten power warnings.
func writeTextPowerWarnings(b *strings.Builder, s *schema.Summary) {
	writeTextWarnings(b, s.PowerWarnings, "power warnings", powerWarningLine)
}
