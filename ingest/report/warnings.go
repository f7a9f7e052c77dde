package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// writeMarkdownWarnings writes a collapsible list of warnings, when there is
// any: at most bud.items lines within the comment's budget, the rest
// counted.
func writeMarkdownWarnings[W any](b *strings.Builder, ws []W, one, many string, kind listKind, bud *budget,
	line func(W, func(string) string) string) {
	n := len(ws)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", wording.Plural(n, one, many))
	shown := ws[:min(bud.items, n)]
	listed := 0
	for i, w := range shown {
		l := "- " + line(w, mdInline) + "\n"
		if !bud.take(kind, len(l)) {
			bud.omit(kind, len(shown)-i-1)
			break
		}
		b.WriteString(l)
		listed++
	}
	if more := n - listed; more > 0 {
		fmt.Fprintf(b, "- … and %d more %s\n", more, bud.more)
	}
	b.WriteString("\n</details>\n")
}

// writeTextWarnings lists up to textListLimit warnings under "title (n):".
func writeTextWarnings[W any](b *strings.Builder, ws []W, title string, line func(W, func(string) string) string) {
	n := len(ws)
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d):\n", title, n)
	shown := ws[:min(textListLimit, n)]
	for _, w := range shown {
		fmt.Fprintf(b, "  %s\n", line(w, plainInline))
	}
	if more := n - len(shown); more > 0 {
		fmt.Fprintf(b, "  … and %d more\n", more)
	}
}

// powerWarningLine is "artifact / file: field published P, telemetry M (±D %)".
func powerWarningLine(w schema.PowerWarning, esc func(string) string) string {
	return fmt.Sprintf("%s / %s: %s published %s, telemetry %s (%s %%)", esc(w.Artifact), esc(w.File), esc(w.Field),
		strconv.FormatFloat(w.Published, 'g', 8, 64), strconv.FormatFloat(w.Measured, 'g', 8, 64),
		strconv.FormatFloat(w.RelDiff*100, 'f', 1, 64))
}

// serverMetricWarningLine is "artifact / file: field published P, derived D (±X %)".
func serverMetricWarningLine(w schema.ServerMetricWarning, esc func(string) string) string {
	return fmt.Sprintf("%s / %s: %s published %s, derived %s (%s %%)", esc(w.Artifact), esc(w.File), esc(w.Field),
		strconv.FormatFloat(w.Published, 'g', 10, 64), strconv.FormatFloat(w.Derived, 'g', 10, 64),
		strconv.FormatFloat(w.RelDiff*100, 'f', 1, 64))
}
