package report

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// requireGolden compares got with testdata/name, or rewrites the file when
// the test runs with -update.
func requireGolden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file %s (run go test -update to create it)", path)
	require.Equal(t, string(want), got, "golden file %s (run go test -update to accept)", path)
}

// Fixed clock for every summary, so golden files are stable.
var (
	testStarted  = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	testFinished = testStarted.Add(42*time.Second + 120*time.Millisecond)
)

// exampleSummary is the production AgentX ingest of docs/report.md: 8
// agentic points on B300, 2 gsm8k evals, one changelog entry.
func exampleSummary() *schema.Summary {
	return &schema.Summary{
		SchemaVersion: schema.SummarySchemaVersion,
		IngestID:      77,
		Run: schema.RunIdentity{
			Repo:             "SemiAnalysisAI/InferenceX",
			SourceRunID:      18234567890,
			SourceRunAttempt: 1,
			MergeRunID:       18234999000,
			MergeRunAttempt:  1,
		},
		Target:     "production",
		Status:     schema.StatusSucceeded,
		StartedAt:  testStarted,
		FinishedAt: testFinished,
		Links: schema.Links{
			IngestRun: "https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/18235000111",
			MergeRun:  "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/18234999000",
			SourceRun: "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/18234567890",
		},
		Rows: schema.Rows{
			Benchmark: schema.Counts{New: 8, Skipped: 8},
			Eval:      schema.Counts{New: 2, Duplicate: 2, Skipped: 2},
			Trace:     schema.Counts{New: 8},
			Power:     schema.Counts{New: 8},
		},
		Stats: schema.Stats{
			BenchmarkFiles:          9,
			RawBenchmarkRows:        16,
			CoveredByPerJobFiles:    8,
			EvalSamplesNew:          2638,
			GPUMetricSamplesNew:     87243,
			PowerPublicationPoints:  8,
			ChangelogEntriesWritten: 1,
		},
		Details: schema.Details{
			ConfigsNew:    2,
			ArtifactsRead: 21,
			FilesRead:     64,
			BytesRead:     48213377,
			AttemptOrder:  "listing",
			DurationMS:    42120,
		},
	}
}

// failuresSummary was written with 26 failures (25 listed with a row, one
// run-level changelog failure) and unmapped values of several kinds.
func failuresSummary() *schema.Summary {
	s := exampleSummary()
	s.Target = "staging"
	s.Status = schema.StatusCompletedWithFailures
	s.Links = schema.Links{SourceRun: "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/18234567890"}
	s.Rows = schema.Rows{
		Benchmark: schema.Counts{New: 120, Duplicate: 4, Skipped: 30, Unmapped: 6, Failed: 22},
		Eval:      schema.Counts{New: 10, Unmapped: 2, Failed: 1},
		Trace:     schema.Counts{New: 100, Skipped: 20, Unmapped: 6, Failed: 2},
		Power:     schema.Counts{New: 118, Duplicate: 2, Skipped: 30, Unmapped: 6},
	}
	s.Stats = schema.Stats{
		BenchmarkFiles:          180,
		RawBenchmarkRows:        182,
		CoveredByPerJobFiles:    24,
		PurgedPoints:            2,
		FailedRunRows:           4,
		RunStatsNew:             1,
		EvalSamplesNew:          13190,
		GPUMetricSamplesNew:     1029384,
		PowerPublicationPoints:  110,
		ChangelogEntriesWritten: 0,
	}
	for i := range 22 {
		s.Failures = append(s.Failures, schema.Failure{
			Category: schema.CategoryBenchmark,
			Artifact: fmt.Sprintf("bmk_dsr1_1k1k_fp8_b200_tp8_conc%d", 4<<(i%6)),
			File:     fmt.Sprintf("dsr1_1k1k_fp8_vllm_tp8_%02d.json", i),
			Reason:   "unexpected end of JSON input",
		})
	}
	s.Failures = append(s.Failures,
		schema.Failure{Category: schema.CategoryEval, Artifact: "eval_results_all", File: "agg_eval.json", Reason: "eval row 3: task gsm8k: missing score"},
		schema.Failure{Category: schema.CategoryTrace, Artifact: "agentic_b300_sglang_conc64", Reason: "zip: not a valid zip file"},
		schema.Failure{Category: schema.CategoryTrace, Artifact: "agentic_b300_sglang_conc128", File: "trace.jsonl", Reason: "line 1207: invalid character '}'"},
		schema.Failure{Category: schema.CategoryRun, Artifact: "changelog", File: "changelog.json", Reason: "entry 0: missing pr-link"},
	)
	for i := range 23 {
		s.Unmapped.Models = append(s.Unmapped.Models, fmt.Sprintf("experimental-model-%02d", i))
	}
	s.Unmapped.Hardware = []string{"imaginary-gpu-999", "mi455x"}
	s.Unmapped.Precisions = []string{"", "nvfp6"}
	s.Unmapped.SpecMethods = []string{"medusa"}
	s.Unmapped.Datasets = []string{"weka_multi_turn_v9"}
	s.Details.UnknownMetrics = []string{"p99.9_ttft"}
	s.Details.AttemptOrder = "inferred"
	s.Notes = []string{"attempt order was inferred: artifacts.json was not available"}
	return s
}

// abortedSummary was rolled back: its reason spans two lines and already
// ends with a period.
func abortedSummary() *schema.Summary {
	s := exampleSummary()
	s.Status = schema.StatusAborted
	s.AbortReason = "store: commit run 18234567890:\n  connection reset by peer."
	s.Links.MergeRun = ""
	s.Rows.Power = schema.Counts{}
	s.Stats.GPUMetricSamplesNew = 0
	return s
}

// dryRunSummary is a dry run with no links and one failure.
func dryRunSummary() *schema.Summary {
	s := exampleSummary()
	s.DryRun = true
	s.Target = "production"
	s.Links = schema.Links{}
	s.Rows.Eval = schema.Counts{New: 3, Failed: 1}
	s.Failures = []schema.Failure{{Category: schema.CategoryEval, Artifact: "eval_gsm8k_b300", File: "results.json", Reason: "bad JSON"}}
	return s
}

// hostileSummary carries input crafted to break the table, inject HTML or
// math, open code spans and start Markdown blocks.
func hostileSummary() *schema.Summary {
	s := failuresSummary()
	s.Target = "prod|<b>uction</b>"
	s.Links = schema.Links{
		IngestRun: "javascript:alert(1)",
		MergeRun:  "https://example.com/runs/1) [x](https://evil.example",
		SourceRun: "https://github.com/o/r/actions/runs/2 \"<img>\"",
	}
	s.Failures = []schema.Failure{
		{Category: schema.CategoryBenchmark, Artifact: "bmk_a|b<script>alert(1)</script>`code`_x_", File: "x|y.json", Reason: "bad\n| --- | --- |\n</details><img src=x onerror=alert(1)>"},
		{Category: schema.CategoryBenchmark, Artifact: "# heading", File: "1. item", Reason: "- list *bold* [link](https://evil.example) ~~gone~~ \\ & &lt;"},
		{Category: schema.CategoryRun, Artifact: "\u202ecod.exe", Reason: "\x1b[31mred\x1b[0m"},
	}
	s.Unmapped = schema.Unmapped{Models: []string{"<img src=x onerror=alert(1)>", "`rm -rf /`", "a_b_c", "$\\frac{1}{0}$ $$x$$"}}
	s.Notes = []string{"**note** <!-- hidden -->", "\n\n"}
	return s
}

// noBenchmarkSummary is an `ingest run` whose three benchmark artifacts
// had expired: the evals, the changelog and one missing artifact's failure
// were written, and the run yielded no benchmark data.
func noBenchmarkSummary() *schema.Summary {
	s := exampleSummary()
	s.Status = schema.StatusCompletedWithFailures
	s.Rows = schema.Rows{Eval: schema.Counts{New: 2}}
	s.Stats = schema.Stats{EvalSamplesNew: 2638, ChangelogEntriesWritten: 1}
	s.Details.ArtifactsRead = 3
	s.Details.EvalRows = 2
	s.Details.ExpiredArtifacts = 3
	s.Details.MissingArtifacts = 1
	s.Details.NoBenchmarkData = "all 3 benchmark artifacts have expired"
	s.Failures = []schema.Failure{{Category: schema.CategoryRun, Artifact: "eval_gsm8k_b300_retry", Reason: "listed in artifacts.json but not in the tree"}}
	s.Notes = []string{
		"3 listed artifacts have expired on GitHub and could not be read: bmk_a, bmk_b, results_bmk",
		"1 artifact is listed in artifacts.json but not in the tree: eval_gsm8k_b300_retry",
	}
	return s
}
