package report

import (
	"fmt"
	"strings"
	"time"
	"unicode"

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
	writeTextWarnings(&b, s.PowerWarnings, "power warnings", powerWarningLine)
	writeTextWarnings(&b, s.ServerMetricWarnings, "server metric warnings", serverMetricWarningLine)
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

// ANSI colours of the terminal report.
const (
	ansiRed    = "\033[31m"
	ansiYellow = "\033[33m"
	ansiGreen  = "\033[32m"
	ansiBold   = "\033[1m"
	ansiReset  = "\033[0m"
)

// Long words (artifact names of about 300 characters) are cut in the
// middle on a terminal, where they would wrap every line naming one.
const (
	longWordRunes = 60 // longer than this is cut
	longWordHead  = 32 // runes kept before the ellipsis: model, sequence lengths
	longWordTail  = 24 // and after it: concurrency, runner, file suffix
)

// shortenLongWords cuts every word (run of non-space characters) of text
// longer than longWordRunes in the middle, keeping its distinctive head
// and tail around "…". URLs are kept whole: a terminal opens or copies them.
func shortenLongWords(text string) string {
	var b strings.Builder
	for len(text) > 0 {
		i := strings.IndexFunc(text, unicode.IsSpace)
		if i < 0 {
			i = len(text)
		}
		w := text[:i]
		if r := []rune(w); len(r) > longWordRunes && !strings.Contains(w, "://") {
			w = string(r[:longWordHead]) + "…" + string(r[len(r)-longWordTail:])
		}
		b.WriteString(w)
		text = text[i:]
		j := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsSpace(r) })
		if j < 0 {
			j = len(text)
		}
		b.WriteString(text[:j])
		text = text[j:]
	}
	return b.String()
}

// TextTerminal is Text for a person at a terminal: the verdict (the
// headline) is repeated as the last line, so it is what the eye lands on
// when the command returns, and with colour the verdict is green, yellow
// or red and the failures red. colour is off for NO_COLOR and for output
// that is not a terminal (the caller decides). Long words are shortened
// (shortenLongWords); Text, JSON and Markdown keep them whole.
func TextTerminal(s *schema.Summary, colour bool) string {
	out := shortenLongWords(Text(s))
	headline, _, _ := strings.Cut(out, "\n")
	out += "\n" + headline + "\n"
	if !colour {
		return out
	}
	verdict := ansiGreen
	switch {
	case strings.Contains(headline, "❌"), strings.Contains(headline, "🚫"):
		verdict = ansiRed
	case strings.Contains(headline, "⚠️"), strings.Contains(headline, "🔎"):
		verdict = ansiYellow
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	inFailures := false
	for i, l := range lines {
		switch {
		case l == headline:
			lines[i] = ansiBold + verdict + l + ansiReset
		case strings.HasPrefix(l, "failures ("):
			inFailures = true
			lines[i] = ansiRed + l + ansiReset
		case inFailures && strings.HasPrefix(l, "  "):
			lines[i] = ansiRed + l + ansiReset
		default:
			inFailures = false
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
