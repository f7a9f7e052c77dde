package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// The eval evidence: every eval task of the run with its score, effective
// samples, threshold, decoding and the scores other runs published
// (summary.impact.evals). Markdown: a <details> block after the dashboard
// impact; text: a short list.

// evalEvidenceHeadline counts the tasks, those below their threshold and
// the infrastructure failures.
func evalEvidenceHeadline(ev []schema.EvalEvidence) string {
	below, failed := 0, 0
	for _, e := range ev {
		if e.BelowThreshold {
			below++
		}
		if e.IntegrationError != "" {
			failed++
		}
	}
	s := "Eval evidence: " + wording.Plural(len(ev), "task", "tasks")
	var parts []string
	if below > 0 {
		parts = append(parts, fmt.Sprintf("%d below threshold", below))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("❌ %s", wording.Plural(failed, "integration error", "integration errors")))
	}
	if len(parts) > 0 {
		s += " — " + strings.Join(parts, ", ")
	}
	return s
}

func evalConfig(e schema.EvalEvidence) string {
	if e.Model == "" {
		return e.Artifact
	}
	s := strings.Join([]string{e.Model, e.Hardware, e.Framework, e.Precision}, " ")
	if e.SpecMethod != "" && e.SpecMethod != "none" {
		s += " " + e.SpecMethod
	}
	if e.Disagg {
		s += " disagg"
	}
	return s
}

func optConc(c *int) string {
	if c == nil {
		return "–"
	}
	return strconv.Itoa(*c)
}

func evalScore(e schema.EvalEvidence) string {
	if e.IntegrationError != "" {
		return "❌ " + e.IntegrationError
	}
	if e.Score == nil {
		return "–"
	}
	s := strconv.FormatFloat(*e.Score, 'f', 4, 64)
	if e.ScoreName != "" {
		s += " (" + e.ScoreName + ")"
	}
	return s
}

func evalThreshold(e schema.EvalEvidence) string {
	if e.Threshold == nil {
		return "–"
	}
	s := strconv.FormatFloat(*e.Threshold, 'f', -1, 64) + " (" + e.ThresholdSource + ")"
	switch {
	case e.BelowThreshold:
		s = "⚠️ " + s + ": below"
	case e.Score != nil:
		s += ": met"
	}
	return s
}

func evalDecoding(e schema.EvalEvidence) string {
	if e.Decoding == "" {
		return "–"
	}
	var kv []string
	if e.Temperature != nil {
		kv = append(kv, "temperature "+strconv.FormatFloat(*e.Temperature, 'g', -1, 64))
	}
	if e.DoSample != nil {
		kv = append(kv, "do_sample "+strconv.FormatBool(*e.DoSample))
	}
	if len(kv) == 0 {
		return e.Decoding
	}
	return e.Decoding + " (" + strings.Join(kv, ", ") + ")"
}

// evalOrder is the tasks the failures first: integration errors, then
// scores below their threshold, then the rest, each in the run's order.
func evalOrder(ev []schema.EvalEvidence) []schema.EvalEvidence {
	rank := func(e schema.EvalEvidence) int {
		switch {
		case e.IntegrationError != "":
			return 0
		case e.BelowThreshold:
			return 1
		}
		return 2
	}
	out := slices.Clone(ev)
	slices.SortStableFunc(out, func(a, b schema.EvalEvidence) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// publishedLines is one line per model and task: the range of the scores
// other runs published for it, how many, and the newest.
func publishedLines(ev []schema.EvalEvidence) []string {
	type key struct{ model, task string }
	var order []key
	seen := map[key][]schema.PublishedScore{}
	for _, e := range ev {
		k := key{e.Model, e.Task}
		if _, ok := seen[k]; !ok {
			order = append(order, k)
			seen[k] = nil
		}
		for _, p := range e.Published {
			if !slices.ContainsFunc(seen[k], func(q schema.PublishedScore) bool { return samePublished(p, q) }) {
				seen[k] = append(seen[k], p)
			}
		}
	}
	var out []string
	for _, k := range order {
		ps := seen[k]
		name := k.task
		if k.model != "" {
			name = k.model + " " + k.task
		}
		if len(ps) == 0 {
			out = append(out, name+": none published by other runs")
			continue
		}
		lo, hi := ps[0].Score, ps[0].Score
		for _, p := range ps {
			lo, hi = min(lo, p.Score), max(hi, p.Score)
		}
		n := ps[0]
		out = append(out, fmt.Sprintf("%s: %s–%s over %s (newest %s: %s %s %s, run %d, %s)", name,
			strconv.FormatFloat(lo, 'f', 4, 64), strconv.FormatFloat(hi, 'f', 4, 64), wording.Plural(len(ps), "score", "scores"),
			strconv.FormatFloat(n.Score, 'f', 4, 64), n.Hardware, n.Framework, n.Precision, n.RunID, n.Date))
	}
	return out
}

// samePublished tells whether two published scores are one row.
func samePublished(a, b schema.PublishedScore) bool {
	return a.RunID == b.RunID && a.Date == b.Date && a.Hardware == b.Hardware && a.Framework == b.Framework &&
		a.Precision == b.Precision && optConc(a.Conc) == optConc(b.Conc) && a.Score == b.Score
}

// writeMarkdownEvalEvidence writes the block, when the run has eval tasks:
// the failures first, at most caps.evals tasks, then one line per model
// and task for what other runs published.
func writeMarkdownEvalEvidence(b *strings.Builder, s *schema.Summary, caps listCaps) {
	if s.Impact == nil || len(s.Impact.Evals) == 0 {
		return
	}
	ev := evalOrder(s.Impact.Evals)
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", evalEvidenceHeadline(ev))
	b.WriteString("| task | config | conc | effective samples | score | threshold | decoding |\n")
	b.WriteString("|---|---|---:|---:|---|---|---|\n")
	for i, e := range ev {
		if i == caps.evals {
			below, _ := evalProblems(&schema.Impact{Evals: ev[i:]})
			more := wording.Plural(len(ev)-i, "more task", "more tasks")
			if below > 0 {
				more += fmt.Sprintf(", %d of them below threshold,", below)
			}
			fmt.Fprintf(b, "\n… and %s %s.\n", more, fullList(s.Run.SourceRunID))
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdInline(e.Task), mdInline(evalConfig(e)), optConc(e.Conc),
			optConc(e.EffectiveSamples), mdInline(evalScore(e)), evalThreshold(e), evalDecoding(e))
	}
	b.WriteString("\nPublished by other runs, one line per model and task:\n\n")
	for _, l := range publishedLines(ev) {
		b.WriteString("- " + mdInline(l) + "\n")
	}
	b.WriteString("\n</details>\n")
}

// writeTextEvalEvidence writes up to ten tasks as console text.
func writeTextEvalEvidence(b *strings.Builder, s *schema.Summary) {
	if s.Impact == nil || len(s.Impact.Evals) == 0 {
		return
	}
	ev := evalOrder(s.Impact.Evals)
	b.WriteString(evalEvidenceHeadline(ev) + "\n")
	for i, e := range ev {
		if i == textListLimit {
			fmt.Fprintf(b, "  … and %d more\n", len(ev)-i)
			break
		}
		fmt.Fprintf(b, "  %s %s conc %s: samples %s, score %s, threshold %s, %s\n", plainInline(e.Task),
			plainInline(evalConfig(e)), optConc(e.Conc), optConc(e.EffectiveSamples), plainInline(evalScore(e)),
			evalThreshold(e), evalDecoding(e))
	}
}
