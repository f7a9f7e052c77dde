package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// The first screen: what a person has to do about the run. When anything
// needs one, the headline sits in a GitHub alert box (CAUTION when nothing
// or not everything was written, WARNING otherwise) and an unfolded
// "Action needed" list follows it, one bullet per kind of problem with its
// count and the command or override that resolves it. When nothing does,
// the headline alone says so.

// defaultTarget is the target whose comment carries the plain marker.
const defaultTarget = "production"

// Marker is the hidden first line of the report of s, by which a rerun
// finds and edits its comment: one comment per source run and target, so
// that a staged ingest and the production one of the same run keep a
// comment each. The production target's is the contract's plain marker.
func Marker(s *schema.Summary) string {
	t := markerTarget(s.Target)
	if t == "" || t == defaultTarget {
		return fmt.Sprintf("<!-- ingest-report source-run=%d -->", s.Run.SourceRunID)
	}
	return fmt.Sprintf("<!-- ingest-report source-run=%d target=%s -->", s.Run.SourceRunID, t)
}

// markerTarget keeps the characters of a target name that cannot end or
// disturb an HTML comment.
func markerTarget(t string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return -1
	}, t)
}

// action is one bullet of "Action needed".
type action struct {
	// caution: the problem kept data out of the database.
	caution bool
	text    string
}

// actionsOf lists what needs a person, the most urgent first. Values from
// input are escaped with esc; commands are code spans.
func actionsOf(s *schema.Summary, esc func(string) string) []action {
	var out []action
	rerun := fmt.Sprintf("`ingest run --run-id %d`", s.Run.SourceRunID)
	imp := s.Impact
	refused := imp != nil && imp.Refused
	switch {
	case s.Status == schema.StatusPurged:
		return nil
	case s.Status == schema.StatusAborted && !refused:
		out = append(out, action{true, "**Nothing was written.** Fix the cause in the headline, then rerun " + rerun + "."})
	}
	if n := appendOnlyTouched(imp); n > 0 {
		out = append(out, action{true, fmt.Sprintf("**Append-only broken: %s touched** (%s). An append-only run may only add points: "+
			"move these re-measurements to a run that is not append-only, or drop `append-only` from its changelog entry.",
			wording.Plural(n, "published point", "published points"), esc(touchedList(imp.AppendOnly.Touched, 5)))})
	}
	if n := openCoverageLoss(imp); n > 0 {
		verb := "If the replacement is deliberate, acknowledge it"
		if refused {
			verb = "If the replacement is deliberate, rerun " + rerun
		}
		out = append(out, action{refused, fmt.Sprintf("**Coverage loss on %s** (table below). %s with %s, "+
			"or a `coverageLossAccepted` entry of the run overrides.", wording.Plural(n, "published curve", "published curves"), verb, acceptHint(imp))})
	}
	if n := failureTotal(s); n > 0 && s.Status != schema.StatusAborted {
		out = append(out, action{true, fmt.Sprintf("**%s** (listed below): fix the artifacts or files named, then rerun %s; the rest is written.",
			wording.Plural(n, "failure", "failures"), rerun)})
	}
	if n := unmappedValueCount(s.Unmapped); n > 0 {
		rows := s.Rows.Benchmark.Unmapped + s.Rows.Eval.Unmapped
		out = append(out, action{false, fmt.Sprintf("**%s** kept %s out: add them to the alias tables "+
			"(docs/operations.md, Extending the reference data), then rerun %s.", wording.Plural(n, "unmapped value", "unmapped values"),
			wording.Plural(rows, "row", "rows"), rerun)})
	}
	if s.Details.NoConclusion && s.Status != schema.StatusAborted {
		out = append(out, action{false, "**Hidden from the dashboard:** the run has no conclusion, and the dashboard shows only runs with one. " +
			"Rerun " + rerun + " with `--conclusion success` (or `failure`, …), or add a conclusion entry to the run overrides."})
	}
	if below, errs := evalProblems(imp); below > 0 || errs > 0 {
		var parts []string
		if below > 0 {
			parts = append(parts, wording.Plural(below, "eval below its threshold", "evals below their threshold"))
		}
		if errs > 0 {
			parts = append(parts, wording.Plural(errs, "eval integration error", "eval integration errors"))
		}
		out = append(out, action{false, fmt.Sprintf("**%s** (eval evidence below): review the scores; a run that should not "+
			"be published is purged with a `purge` entry of the run overrides.", strings.Join(parts, ", "))})
	}
	return out
}

// acceptHint is the --accept-coverage-loss value that acknowledges the
// open loss: the loss token, or all for a summary stored without one.
func acceptHint(imp *schema.Impact) string {
	if imp.LossToken == "" {
		return "`--accept-coverage-loss all`"
	}
	return "`--accept-coverage-loss " + imp.LossToken + "` (or `all`)"
}

// evalProblems counts the eval tasks below their threshold and those
// whose harness failed.
func evalProblems(imp *schema.Impact) (below, errs int) {
	if imp == nil {
		return 0, 0
	}
	for _, e := range imp.Evals {
		if e.BelowThreshold {
			below++
		}
		if e.IntegrationError != "" {
			errs++
		}
	}
	return below, errs
}

// touchedList names up to limit touched points, then counts the rest.
func touchedList(ps []schema.TouchedPoint, limit int) string {
	var names []string
	for i, p := range ps {
		if i == limit {
			names = append(names, fmt.Sprintf("and %d more", len(ps)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s conc %d %s: %s", p.Curve, p.Conc, p.Arm, p.How))
	}
	return strings.Join(names, "; ")
}

// writeMarkdownFirstScreen writes the headline, in an alert box followed
// by the "Action needed" list when anything needs a person.
func writeMarkdownFirstScreen(b *strings.Builder, s *schema.Summary) {
	emoji, sentence := headingWithImpact(s, mdInline)
	heading := fmt.Sprintf("Ingest report — %s %s", emoji, sentence)
	actions := actionsOf(s, mdInline)
	if len(actions) == 0 {
		b.WriteString(heading + "\n")
		return
	}
	kind := "WARNING"
	for _, a := range actions {
		if a.caution {
			kind = "CAUTION"
		}
	}
	fmt.Fprintf(b, "> [!%s]\n> %s\n\n**Action needed**\n\n", kind, heading)
	for _, a := range actions {
		b.WriteString("- " + a.text + "\n")
	}
}

// writeTextActions writes the action list as console text.
func writeTextActions(b *strings.Builder, s *schema.Summary) {
	actions := actionsOf(s, plainInline)
	if len(actions) == 0 {
		return
	}
	b.WriteString("\nAction needed:\n")
	for _, a := range actions {
		t := strings.NewReplacer("**", "", "`", "").Replace(a.text)
		b.WriteString("  - " + t + "\n")
	}
}
