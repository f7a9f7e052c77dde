package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary *schema.Summary
		golden  string
		heading string
	}{
		{"success", exampleSummary(), "markdown_success.golden",
			"Ingest report — ✅ Results ingested into the production database."},
		{"completed with failures", failuresSummary(), "markdown_failures.golden",
			"Ingest report — ⚠️ Results ingested into the staging database, with 26 failures."},
		{"aborted", abortedSummary(), "markdown_aborted.golden",
			"Ingest report — ❌ Ingest failed: store: commit run 18234567890: connection reset by peer. Nothing was written."},
		{"dry run", dryRunSummary(), "markdown_dry_run.golden",
			"Ingest report — 🔎 Dry run — nothing was written."},
		{"no benchmark data", noBenchmarkSummary(), "markdown_no_benchmark_data.golden",
			"Ingest report — ⚠️ No benchmark data in this run: all 3 benchmark artifacts have expired. The rest was ingested into the production database."},
		{"hostile input", hostileSummary(), "markdown_hostile.golden",
			`Ingest report — ⚠️ Results ingested into the prod\|&lt;b&gt;uction&lt;/b&gt; database, with 26 failures.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Markdown(tt.summary)
			requireGolden(t, tt.golden, got)

			lines := strings.Split(got, "\n")
			require.Equal(t, Marker(tt.summary), lines[0])
			require.True(t, strings.HasPrefix(lines[0], "<!-- ingest-report source-run=18234567890"))
			require.Equal(t, tt.heading, headingLine(got))
			requireWellFormedTable(t, got)
			require.Contains(t, got, "\n中文\n\nIngest 报告 — ")
			require.True(t, strings.HasSuffix(got, "重新运行 ingest 时本评论会原地更新。\n"))
		})
	}
}

// headingLine is the English headline of a Markdown report: the second
// line, or the line after the alert marker when the headline is an alert.
func headingLine(md string) string {
	lines := strings.Split(md, "\n")
	if strings.HasPrefix(lines[1], "> [!") {
		return strings.TrimPrefix(lines[2], "> ")
	}
	return lines[1]
}

// requireWellFormedTable checks that the report has exactly one table of a
// header, a separator and the four rows, each with six cells.
func requireWellFormedTable(t *testing.T, md string) {
	t.Helper()
	var table []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
		}
	}
	require.Len(t, table, 6, "table lines")
	unescapedPipe := regexp.MustCompile(`(^|[^\\])\|`)
	for i, line := range table {
		require.Len(t, unescapedPipe.FindAllString(line, -1), 7, "table line %d: %q", i, line)
		require.Equal(t, len(table[0]), len(line), "table line %d is not aligned: %q", i, line)
	}
	for i, category := range []string{"benchmark", "eval", "trace", "power"} {
		require.True(t, strings.HasPrefix(table[i+2], "| "+category+" "), "row %d: %q", i, table[i+2])
	}
}

// TestMarkdownMatchesContractExample checks the rendering of the example
// in docs/report.md verbatim, apart from the links, which the example shows
// without their targets.
func TestMarkdownMatchesContractExample(t *testing.T) {
	t.Parallel()
	s := exampleSummary()
	got := Markdown(s)
	want := strings.Join([]string{
		"Ingest report — ✅ Results ingested into the production database.",
		"",
		"[Ingest workflow](" + s.Links.IngestRun + ") · [Merge Ingest run](" + s.Links.MergeRun + ") · [Benchmark source run](" + s.Links.SourceRun + ")",
		"",
		"| Category  | new | duplicate | skipped | unmapped | failed |",
		"|-----------|-----|-----------|---------|----------|--------|",
		"| benchmark | 8   | 0         | 8       | 0        | 0      |",
		"| eval      | 2   | 2         | 2       | 0        | 0      |",
		"| trace     | 8   | 0         | 0       | 0        | 0      |",
		"| power     | 8   | 0         | 0       | 0        | 0      |",
		"",
		"_{benchmarkFiles 9, rawBenchmarkRows 16, coveredByPerJobFiles 8, purgedPoints 0, failedRunRows 0, runStatsNew 0, runStatsDuplicate 0, evalSamplesNew 2638, gpuMetricSamplesNew 87243, powerPublicationPoints 8, changelogEntriesWritten 1}_",
		"",
		"Counts cover only this run. Rows: benchmark_results, eval_results, agentic rows linked to a trace, gpu_metrics series. This comment updates if the ingest is rerun.",
		"",
		"中文",
		"",
		"Ingest 报告 — ✅ 结果已写入 production 数据库。",
		"",
		"上表仅统计本次运行写入的数据，各行单位依次为 benchmark_results 行、eval_results 行、已关联 trace 的 agentic 行和 gpu_metrics 序列。重新运行 ingest 时本评论会原地更新。",
		"",
	}, "\n")
	require.Equal(t, "<!-- ingest-report source-run=18234567890 -->\n"+want, got)
	require.NotContains(t, got, "<details>")
	require.NoError(t, CheckInvariant(s))
}

func TestMarkdownHeadingVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(s *schema.Summary)
		en, zh string
	}{
		{
			name:   "one failure is singular",
			modify: func(s *schema.Summary) { s.Status = schema.StatusCompletedWithFailures; s.Rows.Trace.Failed = 1 },
			en:     "⚠️ Results ingested into the production database, with 1 failure.",
			zh:     "⚠️ 结果已写入 production 数据库，其中 1 项失败。",
		},
		{
			name: "run-level failures count",
			modify: func(s *schema.Summary) {
				s.Status = schema.StatusCompletedWithFailures
				s.Rows.Benchmark.Failed = 2
				s.Failures = []schema.Failure{{Category: schema.CategoryRun, Artifact: "changelog", Reason: "x"}}
			},
			en: "⚠️ Results ingested into the production database, with 3 failures.",
			zh: "⚠️ 结果已写入 production 数据库，其中 3 项失败。",
		},
		{
			name:   "status with failures but nothing counted",
			modify: func(s *schema.Summary) { s.Status = schema.StatusCompletedWithFailures },
			en:     "⚠️ Results ingested into the production database, with failures.",
			zh:     "⚠️ 结果已写入 production 数据库，但有部分失败。",
		},
		{
			name:   "abort reason without period",
			modify: func(s *schema.Summary) { s.Status = schema.StatusAborted; s.AbortReason = "lock timeout" },
			en:     "❌ Ingest failed: lock timeout. Nothing was written.",
			zh:     "❌ Ingest 失败：lock timeout。已回滚，未写入任何数据。",
		},
		{
			name:   "abort reason with period is not doubled",
			modify: func(s *schema.Summary) { s.Status = schema.StatusAborted; s.AbortReason = "lock timeout.  " },
			en:     "❌ Ingest failed: lock timeout. Nothing was written.",
			zh:     "❌ Ingest 失败：lock timeout。已回滚，未写入任何数据。",
		},
		{
			name:   "abort without reason",
			modify: func(s *schema.Summary) { s.Status = schema.StatusAborted },
			en:     "❌ Ingest failed. Nothing was written.",
			zh:     "❌ Ingest 失败，已回滚，未写入任何数据。",
		},
		{
			name: "abort wins over failures",
			modify: func(s *schema.Summary) {
				s.Status = schema.StatusAborted
				s.AbortReason = "x"
				s.Rows.Benchmark.Failed = 3
			},
			en: "❌ Ingest failed: x. Nothing was written.",
			zh: "❌ Ingest 失败：x。已回滚，未写入任何数据。",
		},
		{
			name:   "dry run wins over failures",
			modify: func(s *schema.Summary) { s.DryRun = true; s.Rows.Benchmark.Failed = 3 },
			en:     "🔎 Dry run — nothing was written.",
			zh:     "🔎 试运行（dry run）— 未写入任何数据。",
		},
		{
			name: "aborted dry run keeps its reason",
			modify: func(s *schema.Summary) {
				s.DryRun = true
				s.Status = schema.StatusAborted
				s.AbortReason = "artifact bmk_x: zip: not a valid zip file"
			},
			en: "🔎 Dry run failed: artifact bmk\\_x: zip: not a valid zip file. Nothing was written.",
			zh: "🔎 试运行失败：artifact bmk\\_x: zip: not a valid zip file。未写入任何数据。",
		},
		{
			name: "no benchmark data",
			modify: func(s *schema.Summary) {
				s.Status = schema.StatusCompletedWithFailures
				s.Rows.Benchmark = schema.Counts{Failed: 2}
				s.Details.NoBenchmarkData = "all 2 benchmark items failed."
			},
			en: "⚠️ No benchmark data in this run: all 2 benchmark items failed. The rest was ingested into the production database.",
			zh: "⚠️ 本次运行没有 benchmark 数据：all 2 benchmark items failed。其余数据已写入 production 数据库。",
		},
		{
			name: "no benchmark data in a dry run",
			modify: func(s *schema.Summary) {
				s.DryRun = true
				s.Status = schema.StatusCompletedWithFailures
				s.Rows.Benchmark = schema.Counts{}
				s.Details.NoBenchmarkData = "the run has no benchmark artifact (bmk_*, results_*)"
			},
			en: "⚠️ No benchmark data in this run: the run has no benchmark artifact (bmk\\_\\*, results\\_\\*). Nothing was written (dry run).",
			zh: "⚠️ 本次运行没有 benchmark 数据：the run has no benchmark artifact (bmk\\_\\*, results\\_\\*)。试运行，未写入任何数据。",
		},
		{
			name: "an abort wins over no benchmark data",
			modify: func(s *schema.Summary) {
				s.Status = schema.StatusAborted
				s.AbortReason = "lock timeout"
				s.Details.NoBenchmarkData = "all 2 benchmark items failed"
			},
			en: "❌ Ingest failed: lock timeout. Nothing was written.",
			zh: "❌ Ingest 失败：lock timeout。已回滚，未写入任何数据。",
		},
		{
			name:   "no target",
			modify: func(s *schema.Summary) { s.Target = "" },
			en:     "✅ Results ingested into the database.",
			zh:     "✅ 结果已写入 数据库。",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := exampleSummary()
			tt.modify(s)
			got := Markdown(s)
			require.Equal(t, "Ingest report — "+tt.en, headingLine(got))
			require.Contains(t, got, "\nIngest 报告 — "+tt.zh+"\n")
		})
	}
}

func TestMarkdownLinks(t *testing.T) {
	t.Parallel()
	const u = "https://github.com/o/r/actions/runs/"
	tests := []struct {
		name  string
		links schema.Links
		want  string
	}{
		{"none", schema.Links{}, ""},
		{"source only", schema.Links{SourceRun: u + "3"}, "[Benchmark source run](" + u + "3)"},
		{"ingest and source", schema.Links{IngestRun: u + "1", SourceRun: u + "3"},
			"[Ingest workflow](" + u + "1) · [Benchmark source run](" + u + "3)"},
		{"all in order", schema.Links{SourceRun: u + "3", MergeRun: u + "2", IngestRun: u + "1"},
			"[Ingest workflow](" + u + "1) · [Merge Ingest run](" + u + "2) · [Benchmark source run](" + u + "3)"},
		{"non-http dropped", schema.Links{IngestRun: "javascript:alert(1)", MergeRun: "/relative", SourceRun: "https://"}, ""},
		{"target cannot be closed early", schema.Links{SourceRun: u + "3) [x](https://evil"},
			"[Benchmark source run](" + u + "3%29%20[x]%28https://evil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, markdownLinks(tt.links))
			s := exampleSummary()
			s.Links = tt.links
			lines := strings.Split(Markdown(s), "\n")
			if tt.want == "" {
				require.Equal(t, "", lines[2])
				require.True(t, strings.HasPrefix(lines[3], "| Category"), "the table follows the heading directly")
				return
			}
			require.Equal(t, tt.want, lines[3])
		})
	}
}

func TestMarkdownDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		summary     *schema.Summary
		contains    []string
		notContains []string
	}{
		{
			name:        "nothing to list",
			summary:     exampleSummary(),
			notContains: []string{"<details>", "Unmapped values", "Failures"},
		},
		{
			name:    "truncated after twenty",
			summary: failuresSummary(),
			contains: []string{
				"<details><summary>29 unmapped values, 26 failures</summary>\n",
				"- model: experimental-model-00, ",
				"experimental-model-19 … and 3 more (full list: `ingest report --run-id 18234567890 --format json`, step summary)\n",
				"- hardware: imaginary-gpu-999, mi455x\n",
				"- precision: _(empty)_, nvfp6\n",
				"- spec method: medusa\n",
				"- dataset: weka\\_multi\\_turn\\_v9\n",
				"- bmk\\_dsr1\\_1k1k\\_fp8\\_b200\\_tp8\\_conc4 / dsr1\\_1k1k\\_fp8\\_vllm\\_tp8\\_00.json: unexpected end of JSON input\n",
				"- … and 6 more (full list: `ingest report --run-id 18234567890 --format json`, step summary)\n",
				"\n</details>\n",
				"Notes:\n\n- attempt order was inferred: artifacts.json was not available\n",
			},
			notContains: []string{"experimental-model-20", "- framework:", "agentic\\_b300\\_sglang\\_conc64"},
		},
		{
			name: "failure without file",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Failures = []schema.Failure{{Category: schema.CategoryTrace, Artifact: "agentic_x", Reason: "zip: not a valid zip file"}}
				return s
			}(),
			contains:    []string{"<details><summary>1 failure</summary>\n", "- agentic\\_x: zip: not a valid zip file\n"},
			notContains: []string{"Unmapped values", "… and"},
		},
		{
			name: "unmapped only",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Unmapped.Frameworks = []string{"tensorrt-llm-nightly"}
				return s
			}(),
			contains:    []string{"<details><summary>1 unmapped value</summary>\n", "- framework: tensorrt-llm-nightly\n"},
			notContains: []string{"**Failures**"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Markdown(tt.summary)
			for _, c := range tt.contains {
				require.Contains(t, got, c)
			}
			for _, c := range tt.notContains {
				require.NotContains(t, got, c)
			}
		})
	}
}

func TestMarkdownHostileInputStaysText(t *testing.T) {
	t.Parallel()
	got := Markdown(hostileSummary())
	// The only HTML is ours.
	allowed := regexp.MustCompile(`<!-- ingest-report source-run=\d+( target=[\w.-]+)? -->|<details>|<details open>|<summary>|</summary>|</details>`)
	require.NotContains(t, allowed.ReplaceAllString(got, ""), "<")
	require.NotContains(t, got, "javascript:")
	require.NotContains(t, got, "\x1b")
	require.NotContains(t, got, "\u202e")
	require.Equal(t, 1, strings.Count(got, "</details>"))
	require.Contains(t, got, "- bmk\\_a\\|b&lt;script&gt;alert(1)&lt;/script&gt;\\`code\\`\\_x\\_ / x\\|y.json: bad \\| --- \\| --- \\| &lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;\n")
	require.Contains(t, got, "- \\#\u2060 heading / 1\\. item: \\- list \\*bold\\* \\[link\\](https:\u2060//evil.example) \\~\\~gone\\~\\~ \\\\ &amp; &amp;lt;\n")
	requireWellFormedTable(t, got)
}
