package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferencex/ingest/schema"
)

// Text renders s as a short console report: the headline, the run it is
// about, the table as aligned plain text, the stats line, then up to ten
// unmapped values of each kind, up to ten failures, and the notes. Values
// from input are reduced to one line without control characters. s must not
// be nil.
func Text(s *schema.Summary) string {
	var b strings.Builder
	emoji, sentence := headingWithImpact(s, plainInline)
	fmt.Fprintf(&b, "Ingest report — %s %s\n", emoji, sentence)
	b.WriteString(runLine(s) + "\n")
	writeTextPublication(&b, s)
	b.WriteString("\n")

	b.WriteString(TextTable(s.Rows, ""))
	fmt.Fprintf(&b, "\n%s\n", statsLine(s.Stats))
	if v := s.Details.LatestBenchmarks; v != nil {
		b.WriteString(viewRefreshLine(*v) + "\n")
	}
	writeTextImpact(&b, s)
	writeTextEvalEvidence(&b, s)
	writeTextActions(&b, s)

	kinds := unmappedKinds(s.Unmapped)
	if len(kinds) > 0 || len(s.Failures) > 0 {
		b.WriteString("\n")
	}
	for _, k := range kinds {
		fmt.Fprintf(&b, "unmapped %s: %s\n", k.name, valueList(k.values, textListLimit, plainInline, "(empty)"))
	}
	if n := totalFailures(s); len(s.Failures) > 0 {
		fmt.Fprintf(&b, "failures (%d):\n", n)
		shown := s.Failures[:min(textListLimit, len(s.Failures))]
		for _, f := range shown {
			fmt.Fprintf(&b, "  %s\n", failureLine(f, plainInline))
		}
		if more := n - int64(len(shown)); more > 0 {
			fmt.Fprintf(&b, "  … and %d more\n", more)
		}
	}
	writeTextPowerWarnings(&b, s)
	writeTextServerMetricWarnings(&b, s)
	for _, n := range s.Notes {
		if n = plainInline(n); n != "" {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	}
	return b.String()
}

// runLine names the run the report is about: source run and attempt,
// repository, merge run, target and duration, where known.
func runLine(s *schema.Summary) string {
	r := s.Run
	parts := []string{fmt.Sprintf("source run %d", r.SourceRunID)}
	if r.SourceRunAttempt > 0 {
		parts[0] += fmt.Sprintf(" attempt %d", r.SourceRunAttempt)
	}
	if repo := plainInline(r.Repo); repo != "" {
		parts[0] += " of " + repo
	}
	if r.MergeRunID != 0 {
		parts = append(parts, fmt.Sprintf("merge run %d", r.MergeRunID))
	}
	if t := plainInline(s.Target); t != "" {
		parts = append(parts, "target "+t)
	}
	if s.Details.DurationMS > 0 {
		parts = append(parts, "took "+(time.Duration(s.Details.DurationMS)*time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}
