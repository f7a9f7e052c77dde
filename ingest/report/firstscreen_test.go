package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/schema"
)

// firstScreen is what a reader sees of a comment before the table: the
// marker, the headline and, when anything needs a person, the action list.
func firstScreen(md string) string {
	head, _, _ := strings.Cut(md, "\n| Category")
	return head
}

// lossKeys are the curves of s that lose coverage.
func lossKeys(s *schema.Summary) []string {
	var keys []string
	for _, c := range s.Impact.Curves {
		if len(c.CoverageLoss) > 0 {
			keys = append(keys, c.Key)
		}
	}
	return keys
}

// firstScreenCases are the summaries whose first screen docs/report.md
// shows: one per way a run can need a person, and the clean run.
func firstScreenCases(t *testing.T) []struct {
	name string
	s    *schema.Summary
} {
	unmapped := exampleSummary()
	unmapped.Unmapped.Models = []string{"experimental-model-00", "experimental-model-01"}
	unmapped.Unmapped.Hardware = []string{"mi455x"}
	unmapped.Rows.Benchmark = schema.Counts{New: 5, Skipped: 8, Unmapped: 3}

	failures := failuresSummary()
	failures.Target = "production"
	failures.Unmapped = schema.Unmapped{}
	failures.Rows.Benchmark.New += failures.Rows.Benchmark.Unmapped
	failures.Rows.Benchmark.Unmapped = 0

	loss := impactSummary(t)
	impact.Guard(loss.Impact, schema.CoverageGuardWarn, nil)

	hidden := exampleSummary()
	hidden.Details.NoConclusion = true

	staged := exampleSummary()
	staged.Target = "staging"

	refused := impactSummary(t)
	keys := impact.Guard(refused.Impact, schema.CoverageGuardRefuse, nil)
	refused.Impact.Refused = true
	refused.Status = schema.StatusAborted
	refused.AbortReason = impact.RefusalReason(keys)

	appendOnly := exampleSummary()
	appendOnly.Details.AppendOnly = true
	appendOnly.Impact = &schema.Impact{Status: schema.ImpactChanged, CurvesTouched: 1, CurvesChanged: 1, PointsGained: 2, PointsReplaced: 1,
		Curves: []schema.CurveChange{{Key: "dsr1/b300/sglang/fp4/agentic", Gained: []schema.GainedPoints{{Arm: "tp8", Concs: []int{96, 128}}},
			Replaced: []schema.Replacement{{MatchedBy: schema.MatchedByConcurrency,
				Previous: schema.ImpactPoint{Conc: 64, Arm: "tp8"}, New: schema.ImpactPoint{Conc: 64, Arm: "tp8"}}}}}}
	impact.CheckAppendOnly(appendOnly.Impact)

	return []struct {
		name string
		s    *schema.Summary
	}{
		{"clean", exampleSummary()}, {"failures", failures}, {"unmapped", unmapped}, {"coverage_loss", loss},
		{"hidden_run", hidden}, {"staged", staged}, {"refused", refused}, {"append_only_broken", appendOnly},
	}
}

// TestFirstScreenGolden: the first screen of each case, as the PR comment
// shows it. A run that needs nothing has its headline alone; any other
// opens with an alert and an action per problem, each with a count and
// what resolves it.
func TestFirstScreenGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range firstScreenCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := firstScreen(Comment(tt.s))
			requireGolden(t, "first_screen_"+tt.name+".golden", got)
			lines := strings.Split(got, "\n")
			require.Equal(t, Marker(tt.s), lines[0])
			actions := actionsOf(tt.s, mdInline)
			if tt.name == "clean" || tt.name == "staged" {
				require.Empty(t, actions)
				require.True(t, strings.HasPrefix(lines[1], "Ingest report — ✅ "), lines[1])
				require.NotContains(t, got, "Action needed")
				return
			}
			require.NotEmpty(t, actions)
			require.Regexp(t, `^> \[!(WARNING|CAUTION)\]$`, lines[1])
			require.True(t, strings.HasPrefix(lines[2], "> Ingest report — "), lines[2])
			require.NotContains(t, lines[2], "✅", "a run that needs a person is not ticked off")
			require.Contains(t, got, "\n**Action needed**\n\n")
			require.Equal(t, len(actions), strings.Count(got, "\n- **"), "one bullet per action")
		})
	}
}

// TestFirstScreenFacts: what each case's first screen must say.
func TestFirstScreenFacts(t *testing.T) {
	t.Parallel()
	cases := map[string]*schema.Summary{}
	for _, c := range firstScreenCases(t) {
		cases[c.name] = c.s
	}
	md := func(name string) string { return Comment(cases[name]) }

	require.Equal(t, "<!-- ingest-report source-run=18234567890 -->", Marker(cases["clean"]))
	require.Equal(t, "<!-- ingest-report source-run=18234567890 target=staging -->", Marker(cases["staged"]),
		"a staged ingest keeps its own comment")

	hidden := md("hidden_run")
	require.Contains(t, hidden, "> Ingest report — ⚠️ Results ingested into the production database. The dashboard will not show this run: it has no conclusion.\n")
	require.Contains(t, hidden, "`--conclusion success`")
	require.Contains(t, hidden, "Ingest 报告 — ⚠️ 结果已写入 production 数据库。 该运行没有 conclusion，dashboard 不会显示。")

	loss := cases["coverage_loss"]
	token := impact.LossToken(lossKeys(loss))
	require.Contains(t, md("coverage_loss"), "`--accept-coverage-loss "+token+"` (or `all`)")
	require.Contains(t, md("coverage_loss"), "> [!WARNING]\n")

	refused := md("refused")
	require.Contains(t, refused, "> [!CAUTION]\n> Ingest report — ❌ Ingest failed: the coverage guard refused the run: it would shrink 2 published curves")
	require.Contains(t, refused, "--accept-coverage-loss "+token+" (or all)", "the headline keeps how to acknowledge the loss")
	require.Contains(t, refused, "rerun `ingest run --run-id 18234567890` with `--accept-coverage-loss "+token+"`")
	require.Contains(t, refused, "| benchmark | 8   | 0         | 8       | 0        | 0      |", "a refused run shows what it would have written")

	broken := md("append_only_broken")
	require.Contains(t, broken, "> [!CAUTION]\n")
	require.Contains(t, broken, "**Append-only broken: 1 published point touched** (dsr1/b300/sglang/fp4/agentic conc 64 tp8: re-run)")
	require.Contains(t, broken, "| `dsr1/b300/sglang/fp4/agentic` | 64 | tp8 | re-run |")

	clean := exampleSummary()
	clean.Details.AppendOnly = true
	clean.Impact = &schema.Impact{Status: schema.ImpactChanged, CurvesTouched: 1, CurvesChanged: 1, PointsGained: 2,
		Curves: []schema.CurveChange{{Key: "c", Gained: []schema.GainedPoints{{Arm: "tp8", Concs: []int{96, 128}}}}}}
	impact.CheckAppendOnly(clean.Impact)
	require.Contains(t, Comment(clean), "\nAppend-only: 2 points added, 0 existing points touched.\n")
	require.Empty(t, actionsOf(clean, mdInline))
}

// replacementSummary is a large replacement run: nCurves published curves
// each re-measured in full but for one dropped point (a coverage loss on
// every curve), and evals of which below are under their threshold.
func replacementSummary(nCurves, perCurve, evals, below int) *schema.Summary {
	s := exampleSummary()
	imp := &schema.Impact{Status: schema.ImpactChanged, CurvesTouched: nCurves, CurvesChanged: nCurves, Curves: []schema.CurveChange{}}
	v := func(x float64) *float64 { return &x }
	for i := range nCurves {
		c := schema.CurveChange{Key: fmt.Sprintf("qwen3.5/b200/dynamo-sglang/fp8/8192x1024/none/disagg/off-%03d", i),
			Before: schema.CurveShape{Points: perCurve, Arms: []string{"P1xtp4/D1xtp4", "P2xtp8/D1xtp8"}, ConcMin: 1, ConcMax: 1024},
			After:  schema.CurveShape{Points: perCurve - 1, Arms: []string{"P1xtp4/D1xtp4", "P2xtp8/D1xtp8"}, ConcMin: 1, ConcMax: 1024}}
		for j := range perCurve - 1 {
			p := schema.ImpactPoint{Conc: 1 << (j % 11), Arm: "P1xtp4/D1xtp4",
				Values: schema.PointValues{TputPerGPU: v(1612), OutputTputPerGPU: v(14.38), MedianIntvty: v(72.1), P90E2EL: v(48.53), MedianTTFT: v(3.932)}}
			c.Replaced = append(c.Replaced, schema.Replacement{MatchedBy: schema.MatchedByConcurrency, Previous: p, New: p,
				Change: schema.PointValues{TputPerGPU: v(0.05)}})
		}
		c.Dropped = []schema.ImpactPoint{{Conc: 2048, Arm: "P2xtp8/D1xtp8"}}
		c.CoverageLoss = []string{"1 point no longer shown, with no re-measurement at the same concurrency and arm: conc 2048 P2xtp8/D1xtp8",
			"interactivity frontier: 1 point that no point after reaches within 20 % (x) and 20 % (throughput): conc 2048 P2xtp8/D1xtp8"}
		imp.Curves = append(imp.Curves, c)
		imp.PointsReplaced += perCurve - 1
		imp.PointsDropped++
	}
	imp.CoverageLossCurves = nCurves
	for i := range evals {
		e := schema.EvalEvidence{Task: "gsm8k", Model: "qwen3.5", Hardware: "b200", Framework: "sglang", Precision: "fp8", Conc: &[]int{4}[0],
			Score: v(0.95), ScoreName: "em_strict", Threshold: v(0.94), ThresholdSource: "models.qwen3.5", Decoding: "greedy"}
		if i < below {
			e.Score, e.BelowThreshold = v(0.90), true
		}
		for k := range 5 {
			e.Published = append(e.Published, schema.PublishedScore{RunID: int64(9000000 + k), Date: "2026-11-20", Hardware: "b200",
				Framework: "sglang", Precision: "fp8", Conc: &[]int{4}[0], Score: 0.93})
		}
		imp.Evals = append(imp.Evals, e)
	}
	s.Impact = imp
	return s
}

// TestLargeReplacementCommentIsShort: a replacement of 2000 points on 108
// curves, every one losing coverage, with 60 evals of which 43 are below
// threshold, stays under 20,000 characters in the PR comment; the lists
// say how much they leave out and where it is, the counts match, and
// one short token acknowledges the loss.
func TestLargeReplacementCommentIsShort(t *testing.T) {
	t.Parallel()
	s := replacementSummary(108, 19, 60, 43)
	impact.Guard(s.Impact, schema.CoverageGuardWarn, nil)
	body := Comment(s)
	require.LessOrEqual(t, len([]rune(body)), 20000)
	require.Contains(t, body, "**Coverage loss on 108 published curves** (table below)")
	require.Contains(t, body, "… and 98 more curves (full list: `ingest report --run-id 18234567890 --format json`, step summary).")
	require.Contains(t, body, "… and 105 more changed curves (full list: ")
	require.Contains(t, body, "`--accept-coverage-loss "+s.Impact.LossToken+"` (or `all`)")
	require.Less(t, len(s.Impact.LossToken), 20)
	require.Contains(t, body, "<summary>Eval evidence: 60 tasks — 43 below threshold</summary>")
	require.Contains(t, body, "… and 50 more tasks, 33 of them below threshold, (full list: ")
	require.Equal(t, 1, strings.Count(body, "- qwen3.5 gsm8k: 0.9300–0.9300 over 5 scores (newest 0.9300: b200 sglang fp8, run 9000000, 2026-11-20)\n"), "one published line per task")
	for _, line := range strings.Split(body, "\n") {
		require.NotContains(t, line, "…\n", "nothing is cut mid-word")
	}
	// The step summary holds every curve of the loss.
	require.Contains(t, StepSummary(s), "off-107`")
}

// TestFirstScreenScreenshots writes the PR comment of four cases as
// Markdown into the folder INGEST_REPORT_SCREENSHOTS names, for
// docs/report/screenshots.sh to render as GitHub does and photograph
// (docs/report.md, "The first screen"). Without the variable it skips.
func TestFirstScreenScreenshots(t *testing.T) {
	dir := os.Getenv("INGEST_REPORT_SCREENSHOTS")
	if dir == "" {
		t.Skip("INGEST_REPORT_SCREENSHOTS is not set")
	}
	shots := map[string]bool{"clean": true, "coverage_loss": true, "refused": true, "hidden_run": true}
	for _, c := range firstScreenCases(t) {
		if shots[c.name] {
			require.NoError(t, os.WriteFile(filepath.Join(dir, c.name+".md"), []byte(Comment(c.s)), 0o644))
		}
	}
}
