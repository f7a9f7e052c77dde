package report

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// What GitHub does to a comment's text after Markdown: it turns "@name"
// and "@org/team" into mentions (and notifies them), "#123", "GH-123" and
// "owner/repo#123" into issue references, and bare URLs and "www." into
// autolinks (a URL to an issue references it too). None of it happens
// inside code spans, and a character between "@" or "#" and the name or
// number stops it.
var (
	ghMention  = regexp.MustCompile(`(^|[^A-Za-z0-9_` + "`" + `])@[A-Za-z0-9]`)
	ghIssueRef = regexp.MustCompile(`(^|[^&])#[0-9]`)
	ghGHRef    = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_])GH-[0-9]`)
	ghAutolink = regexp.MustCompile(`(?i)(https?://|(^|[^A-Za-z0-9_])www\.)`)
	ghCodeSpan = regexp.MustCompile("`[^`]*`")
	ghComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	ghOurLink  = regexp.MustCompile(`(^|[^\\])\[[^\]\\]*\]\([^)]*\)`)
	ghEscape   = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
)

// githubText is the text a reader sees of md, outside code spans, as
// GitHub's reference filters see it: HTML comments and code spans dropped,
// backslash escapes and entities resolved. Link targets of the report's own
// links line are dropped too.
func githubText(md string) string {
	md = ghComment.ReplaceAllString(md, "")
	md = ghOurLink.ReplaceAllString(md, "$1")
	md = strings.ReplaceAll(md, "\\`", "\x00")
	md = ghCodeSpan.ReplaceAllString(md, "")
	md = strings.ReplaceAll(md, "\x00", "`")
	md = ghEscape.ReplaceAllString(md, "$1")
	return html.UnescapeString(md)
}

// githubReferences are the mentions, issue references and autolinks
// GitHub would make of md.
func githubReferences(md string) []string {
	text := githubText(md)
	var out []string
	for _, re := range []*regexp.Regexp{ghMention, ghIssueRef, ghGHRef, ghAutolink} {
		out = append(out, re.FindAllString(text, -1)...)
	}
	return out
}

// pingValues are texts from artifacts that would notify or link.
var pingValues = []string{
	"@octocat", "@SemiAnalysisAI/infra-team", "model-@user", "retry #2", "#123", "fixes GH-42", "see gh-7",
	"other/repo#9", "https://github.com/SemiAnalysisAI/InferenceX/issues/1", "www.example.com",
	`\@escaped`, `\#456`, "&#64;entity", "&#35;789", "@\u200bzw",
}

// pingSummary carries every ping value in every field a report shows.
func pingSummary() *schema.Summary {
	s := exampleSummary()
	s.Status = schema.StatusCompletedWithFailures
	s.Target = "db @owner #1"
	s.Notes = slicesClone(pingValues)
	s.Unmapped.Models = slicesClone(pingValues)
	s.Unmapped.Hardware = []string{"b200 @hw #5"}
	for _, v := range pingValues {
		s.Failures = append(s.Failures, schema.Failure{Category: schema.CategoryBenchmark, Artifact: "bmk " + v, File: v + ".json", Reason: "bad " + v})
	}
	s.PowerWarnings = []schema.PowerWarning{{Artifact: "gpu @x", File: "#3.csv", Field: "@f", Published: 1, Measured: 2, RelDiff: 0.5}}
	return s
}

func slicesClone(v []string) []string { return append([]string(nil), v...) }

// TestMarkdownNotifiesNobody is the rendered-text contract of the PR
// comment: no value from input becomes a mention, an issue reference or an
// autolink, and each still reads as it was (the word joiner is invisible).
func TestMarkdownNotifiesNobody(t *testing.T) {
	t.Parallel()
	s := pingSummary()
	for name, md := range map[string]string{"markdown": Markdown(s), "comment": Comment(s)} {
		t.Run(name, func(t *testing.T) {
			require.Empty(t, githubReferences(md), "GitHub would link or notify")
			visible := strings.ReplaceAll(githubText(md), wordJoiner, "")
			shown := pingValues
			if name == "comment" {
				shown = pingValues[:capsFor(CommentLimit).items] // the comment lists the first ones
			}
			for _, v := range shown {
				want := strings.ReplaceAll(v, "\u200b", "<U+200B>")
				require.Contains(t, visible, want, "the value no longer reads as it was")
			}
		})
	}
}

// mathValues are texts from input that GitHub would render as LaTeX math:
// inline $…$, display $$…$$ and the $`…`$ form.
var mathValues = []string{"$x^2$", "$$\\sum_i x_i$$", "cost $5 and $6", "$`a`$", "price: $", "\\$x$"}

// ghMath finds a "$" GitHub's math would read: one not escaped by a
// backslash, outside code spans.
var ghMath = regexp.MustCompile(`(^|[^\\])(\\\\)*\$`)

// TestMarkdownRendersNoMath: no value from input becomes math in the
// comment — every "$" outside a code span is escaped — and each still
// reads as it was.
func TestMarkdownRendersNoMath(t *testing.T) {
	t.Parallel()
	s := exampleSummary()
	s.Status = schema.StatusCompletedWithFailures
	s.Target = "db $t$"
	s.Notes = slicesClone(mathValues)
	s.Unmapped.Models = slicesClone(mathValues)
	for _, v := range mathValues {
		s.Failures = append(s.Failures, schema.Failure{Category: schema.CategoryBenchmark, Artifact: "bmk " + v, File: v + ".json", Reason: "bad " + v})
	}
	s.PowerWarnings = []schema.PowerWarning{{Artifact: "gpu $a$", File: "$b$.csv", Field: "$f$", Published: 1, Measured: 2, RelDiff: 0.5}}
	for name, md := range map[string]string{"markdown": Markdown(s), "comment": Comment(s), "step summary": StepSummary(s)} {
		t.Run(name, func(t *testing.T) {
			outside := ghComment.ReplaceAllString(md, "")
			outside = strings.ReplaceAll(outside, "\\`", "\x00")
			outside = ghCodeSpan.ReplaceAllString(outside, "")
			for _, line := range strings.Split(outside, "\n") {
				require.False(t, ghMath.MatchString(line), "GitHub would render math in %q", line)
			}
			visible := strings.ReplaceAll(githubText(md), wordJoiner, "")
			for _, v := range mathValues {
				require.Contains(t, visible, v, "the value no longer reads as it was")
			}
		})
	}
}

// TestGitHubReferencesSeesPings checks the contract's checker: unescaped
// the values would notify or link.
func TestGitHubReferencesSeesPings(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"@octocat", "@org/team", `\#123`, "#123", "GH-42", "o/r#9", "https://x.io/a", "www.x.io", "&#64;user", "&#35;5"} {
		require.NotEmpty(t, githubReferences("- "+v+"\n"), v)
	}
	require.Empty(t, githubReferences("- `@octocat #1`\n"), "code spans are not linked")
}

// bigSummary is a run whose lists are far longer than a comment holds:
// long notes and failures full of characters that escaping inflates.
func bigSummary(failures, notes int) *schema.Summary {
	s := exampleSummary()
	s.Status = schema.StatusCompletedWithFailures
	long := strings.Repeat("|_*#@<>&`", 40)
	for i := range notes {
		s.Notes = append(s.Notes, fmt.Sprintf("note %d %s", i, long))
	}
	for i := range failures {
		s.Failures = append(s.Failures, schema.Failure{Category: schema.CategoryRun, Artifact: fmt.Sprintf("bmk_%d_%s", i, long),
			File: long + ".json", Reason: "listed but missing " + long})
	}
	for i := range 30 {
		v := fmt.Sprintf("model-%d-%s", i, long)
		s.Unmapped.Models = append(s.Unmapped.Models, v)
		s.Unmapped.Hardware = append(s.Unmapped.Hardware, v)
		s.Unmapped.Precisions = append(s.Unmapped.Precisions, v)
		s.Unmapped.Frameworks = append(s.Unmapped.Frameworks, v)
	}
	for i := range 30 {
		s.PowerWarnings = append(s.PowerWarnings, schema.PowerWarning{Artifact: fmt.Sprintf("gpu_%d_%s", i, long), File: long, Field: "avg_power_w", Published: 1, Measured: 2, RelDiff: 1})
	}
	s.Details.FailuresNotListed = 40000
	s.Details.RunFailuresNotListed = 40000
	return s
}

func TestCommentFitsGitHubLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		failures, notes  int
		wantCut          bool
		wantCutMentioned []string
	}{
		{"small report is whole", 2, 2, false, nil},
		{"many notes", 0, 2000, true, []string{"power warnings"}},
		{"many long failures and notes", 10000, 500, true, []string{"failures", "power warnings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := bigSummary(tt.failures, tt.notes)
			if !tt.wantCut {
				s = exampleSummary()
				s.Notes = []string{"a note"}
			}
			full, body := Markdown(s), Comment(s)
			require.LessOrEqual(t, len(body), CommentLimit, "the comment is over GitHub's limit")
			if !tt.wantCut {
				require.Equal(t, full, body)
				return
			}
			require.Greater(t, len(full), CommentLimit, "the case does not test the cut")
			// Headline, table and counts intact.
			fullLines := strings.Split(full, "\n")
			bodyLines := strings.Split(body, "\n")
			for i := range 12 {
				require.Equal(t, fullLines[i], bodyLines[i], "line %d", i+1)
			}
			require.Contains(t, body, fmt.Sprintf("_{%s}_", statsLine(s.Stats)))
			require.Contains(t, body, "中文")
			require.True(t, strings.HasSuffix(body, footerZH(outcomeWithFailures)+"\n"))
			require.Contains(t, body, "Cut to fit GitHub's limit of 65,536 characters: ")
			for _, w := range tt.wantCutMentioned {
				require.Regexp(t, `Cut to fit[^\n]*\d+ `+w, body)
			}
			require.Contains(t, body, fmt.Sprintf("`ingest report --run-id %d`", s.Run.SourceRunID))
			// The lists are capped before the budget cuts them.
			require.Contains(t, body, fmt.Sprintf("- … and %d more (full list: `ingest report --run-id %d --format json`, step summary)\n",
				tt.notes-10, s.Run.SourceRunID))
			require.Contains(t, body, "job summary")
			require.Contains(t, body, "`--summary-json`")
			require.Equal(t, strings.Count(body, "<details>"), strings.Count(body, "</details>"))
			require.Empty(t, githubReferences(body))
		})
	}
}

func TestHeadlineCountsExact(t *testing.T) {
	t.Parallel()
	s := exampleSummary()
	s.Status = schema.StatusCompletedWithFailures
	s.Rows = schema.Rows{}
	for i := range 10000 {
		s.Failures = append(s.Failures, schema.Failure{Category: schema.CategoryRun, Artifact: fmt.Sprintf("bmk_%d", i), Reason: "listed but missing"})
	}
	s.Details.FailuresNotListed = 40000
	s.Details.RunFailuresNotListed = 40000
	for name, out := range map[string]string{"md": Markdown(s), "comment": Comment(s), "text": Text(s)} {
		require.Contains(t, out, "with 50000 failures", name)
		require.NotContains(t, out, "10000 failures", name)
	}
	require.Contains(t, Markdown(s), "<summary>50000 failures</summary>")
	require.Contains(t, Text(s), "failures (50000):")
}
