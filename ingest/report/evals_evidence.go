package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// The eval evidence: every eval task of the run with its score, effective
// samples, threshold, decoding and the scores other runs published
// (summary.impact.evals). Markdown: a <details> block after the dashboard
// impact; text: a short list.

// evalEvidenceLimit bounds the tasks listed (the JSON has them all).
const evalEvidenceLimit = 20

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
	s := "Eval evidence: " + plural(len(ev), "task", "tasks")
	var parts []string
	if below > 0 {
		parts = append(parts, fmt.Sprintf("⚠️ %d below threshold", below))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("❌ %s", plural(failed, "integration error", "integration errors")))
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

func evalPublished(e schema.EvalEvidence) string {
	if len(e.Published) == 0 {
		return "none"
	}
	var ps []string
	for _, p := range e.Published {
		ps = append(ps, fmt.Sprintf("%s (%s %s %s, conc %s, run %d, %s)", strconv.FormatFloat(p.Score, 'f', 4, 64),
			p.Hardware, p.Framework, p.Precision, optConc(p.Conc), p.RunID, p.Date))
	}
	return strings.Join(ps, "; ")
}

// writeMarkdownEvalEvidence writes the block, when the run has eval tasks.
func writeMarkdownEvalEvidence(b *strings.Builder, s *schema.Summary) {
	if s.Impact == nil || len(s.Impact.Evals) == 0 {
		return
	}
	ev := s.Impact.Evals
	fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n", evalEvidenceHeadline(ev))
	b.WriteString("| task | config | conc | effective samples | score | threshold | decoding | published (newest, other runs) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for i, e := range ev {
		if i == evalEvidenceLimit {
			fmt.Fprintf(b, "\n… and %s (the JSON summary lists every task).\n", plural(len(ev)-i, "more task", "more tasks"))
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdInline(e.Task), mdInline(evalConfig(e)), optConc(e.Conc),
			optConc(e.EffectiveSamples), mdInline(evalScore(e)), evalThreshold(e), evalDecoding(e), mdInline(evalPublished(e)))
	}
	b.WriteString("\n</details>\n")
}

// writeTextEvalEvidence writes up to ten tasks as console text.
func writeTextEvalEvidence(b *strings.Builder, s *schema.Summary) {
	if s.Impact == nil || len(s.Impact.Evals) == 0 {
		return
	}
	ev := s.Impact.Evals
	b.WriteString(evalEvidenceHeadline(ev) + "\n")
	for i, e := range ev {
		if i == textListLimit {
			fmt.Fprintf(b, "  … and %d more\n", len(ev)-i)
			break
		}
		fmt.Fprintf(b, "  %s %s conc %s: samples %s, score %s, threshold %s, %s; published: %s\n", plainInline(e.Task),
			plainInline(evalConfig(e)), optConc(e.Conc), optConc(e.EffectiveSamples), plainInline(evalScore(e)),
			evalThreshold(e), evalDecoding(e), plainInline(evalPublished(e)))
	}
}
