package ingest_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	conc64Winner  = "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc64_b200-dgxc_07_recipe-341408ee19f26bfd"
	conc256Winner = "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc256_b200-dgxc_05_recipe-341408ee19f26bfd"
	malformed     = "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1024_b200-dgxc_09_recipe-341408ee19f26bfd"
)

// The demo run is designed to produce exact counts (fixtures/DEMO.md); a
// rerun finds every row and changes nothing.
func TestDemoRunFirstIngestAndRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)

	first := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusCompletedWithFailures, first.Status)
	require.Equal(t, schema.Counts{New: 12, Duplicate: 0, Skipped: 12, Unmapped: 2, Failed: 1}, first.Rows.Benchmark)
	require.Equal(t, schema.Stats{BenchmarkFiles: 17, RawBenchmarkRows: 27, CoveredByPerJobFiles: 9, FailedRunRows: 2,
		RunStatsNew: 16, EvalSamplesNew: 2678, GPUMetricSamplesNew: demoSamples, PowerPublicationPoints: 7, ChangelogEntriesWritten: 2}, first.Stats)
	// Evals: the single-node gsm8k row and the batched conc 4 and 64 rows
	// are new; their aggregate copies are duplicates; conc 16 did not
	// complete. 2638 + 2 × 20 sample lines.
	require.Equal(t, schema.Counts{New: 3, Duplicate: 3, Skipped: 1}, first.Rows.Eval)
	require.EqualValues(t, 7, first.Details.EvalRows)
	require.EqualValues(t, 3, first.Details.EvalSampleFiles)
	require.EqualValues(t, 2678, first.Details.EvalSampleLines)
	require.Zero(t, first.Details.EvalSampleLinesFailed)
	// AgentX: three points with a raw sibling (one per layout), one without.
	require.Equal(t, schema.Counts{New: 3, Skipped: 1}, first.Rows.Trace)
	require.EqualValues(t, 3, first.Details.ServerLogsNew)
	requireDemoTelemetry(t, e, first, false)
	require.EqualValues(t, 1, first.Details.StaleAttemptRows)
	require.Equal(t, "listing", first.Details.AttemptOrder)
	require.Equal(t, []string{"a100-lab"}, first.Unmapped.Hardware)
	require.Len(t, first.Failures, 2) // the second is telemetry's: requireDemoTelemetry
	require.Equal(t, schema.Failure{Category: schema.CategoryBenchmark, Artifact: malformed,
		File: "agg_" + strings.TrimPrefix(malformed, "bmk_") + ".json", Reason: "unexpected end of file inside the row object"}, first.Failures[0])
	require.Equal(t, int64(demoRunID), first.Run.SourceRunID)
	require.Equal(t, 2, first.Run.SourceRunAttempt)

	// The retried point: attempt 2 won. The failed newer attempt of conc 256
	// did not replace the good row.
	var artifact string
	var artifactID *int64
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT source_artifact, source_artifact_id FROM benchmark_results WHERE conc = 64`).Scan(&artifact, &artifactID))
	require.Equal(t, conc64Winner, artifact)
	require.NotNil(t, artifactID, "listed artifacts keep their GitHub id")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 256 AND source_artifact = $1`, conc256Winner))
	require.Equal(t, 12, e.count(`SELECT count(*) FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id
		WHERE w.github_run_id = $1 AND w.run_attempt = 2 AND b.date = '2026-11-20' AND b.ingest_id = $2`, demoRunID, first.IngestID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM configs WHERE hardware = 'b200' AND model = 'qwen3.5' AND framework = 'sglang' AND num_prefill_gpu = 8`), "fixed-seq and AgentX points share the config")
	require.Equal(t, "completed_with_failures", e.ledgerStatus(first.IngestID))
	// The single-node eval lands on the benchmarks' config row, although its
	// meta_env.json carries HEAD's clobbered ep/dp_attention.
	require.Equal(t, 1, e.count(`SELECT count(DISTINCT config_id) FROM (
		SELECT config_id FROM benchmark_results WHERE benchmark_type NOT LIKE 'agentic%' UNION ALL
		SELECT config_id FROM eval_results WHERE conc = 64 AND source_file NOT LIKE '%_conc64.json') t`))
	require.Equal(t, 3, e.count(`SELECT count(*) FROM eval_results WHERE task = 'gsm8k' AND isl = 8192 AND osl = 1024`))
	require.Equal(t, 2678, e.count(`SELECT count(*) FROM eval_samples`))
	require.Equal(t, 1319, e.count(`SELECT count(*) FROM eval_sample_texts WHERE kind = 'doc'`), "every document stored once")
	require.Equal(t, 1319, e.count(`SELECT count(*) FROM eval_sample_texts WHERE kind = 'prompt'`), "every prompt stored once")
	require.Equal(t, 1339, e.count(`SELECT count(*) FROM eval_sample_texts WHERE kind = 'resps'`), "one per document and eval, shared by both filters")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM changelog_entries WHERE merge_run_id = $1 AND NOT is_fallback`, demoRunID))

	before := e.checksums(dataTables...)
	second := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{New: 0, Duplicate: 12, Skipped: 12, Unmapped: 2, Failed: 1}, second.Rows.Benchmark)
	require.Equal(t, schema.Counts{Duplicate: 3, Skipped: 1}, second.Rows.Trace)
	require.Zero(t, second.Details.TraceBlobsNew)
	require.EqualValues(t, 0, second.Stats.RunStatsNew)
	require.EqualValues(t, 16, second.Stats.RunStatsDuplicate)
	require.Zero(t, second.Details.BenchmarkRowsUpdated)
	require.Equal(t, schema.Counts{New: 0, Duplicate: 6, Skipped: 1}, second.Rows.Eval)
	require.Zero(t, second.Stats.EvalSamplesNew)
	require.Zero(t, second.Stats.ChangelogEntriesWritten)
	require.Zero(t, second.Details.EvalRowsUpdated)
	require.EqualValues(t, 3, second.Details.EvalSampleFilesUnchanged, "the samples files are hashed, not parsed again")
	require.EqualValues(t, 2678, second.Details.EvalSampleLines)
	require.EqualValues(t, 2678, second.Details.EvalSamplesDuplicate, "every sample a duplicate")
	require.Zero(t, first.Details.EvalSamplesDuplicate)
	requireDemoTelemetry(t, e, second, true)
	require.Equal(t, before, e.checksums(dataTables...), "a rerun leaves every table byte-identical")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM ingests`), "each ingest has its ledger row")
	require.NotEqual(t, first.IngestID, second.IngestID)
}

// The report of the demo run, rendered from its summary, is stable.
func TestDemoRunReportGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	e.mustIngest(dir, ingest.Config{Target: "production"})
	sum := e.mustIngest(dir, ingest.Config{Target: "production"})
	for _, f := range []struct{ name, format string }{{"demo_rerun.md", "md"}, {"demo_rerun.json", "json"}, {"demo_rerun.txt", "text"}} {
		var b strings.Builder
		require.NoError(t, report.Render(&b, sum, f.format))
		golden := filepath.Join("testdata", f.name+".golden")
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		require.Equal(t, string(want), b.String(), "%s differs; rerun with -update and review", golden)
	}
}

// A dry run reports exactly what a real ingest would, and leaves no trace.
func TestDryRunLeavesNoTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	all := append([]string{"ingests"}, dataTables...)
	before := e.checksums(all...)
	dry := e.mustIngest(dir, ingest.Config{DryRun: true})
	require.True(t, dry.DryRun)
	require.Zero(t, dry.IngestID)
	require.Equal(t, before, e.checksums(all...))

	real := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, real.Rows, dry.Rows)
	require.Equal(t, real.Stats, dry.Stats)

	// A dry rerun over existing rows predicts duplicates, still writing nothing.
	after := e.checksums(all...)
	dry2 := e.mustIngest(dir, ingest.Config{DryRun: true})
	require.EqualValues(t, 12, dry2.Rows.Benchmark.Duplicate)
	require.EqualValues(t, 6, dry2.Rows.Eval.Duplicate)
	require.EqualValues(t, 3, dry2.Rows.Trace.Duplicate)
	require.Equal(t, after, e.checksums(all...))
}

func (e *env) ledgerStatus(id int64) string {
	e.t.Helper()
	var status string
	require.NoError(e.t, e.pool().QueryRow(context.Background(), `SELECT status FROM ingests WHERE id = $1`, id).Scan(&status))
	return status
}
