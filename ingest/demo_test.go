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
	e := newEnv(t)
	dir := demoTree(t)

	first := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusCompletedWithFailures, first.Status)
	require.Equal(t, schema.Counts{New: 8, Duplicate: 0, Skipped: 12, Unmapped: 2, Failed: 1}, first.Rows.Benchmark)
	require.Equal(t, schema.Stats{BenchmarkFiles: 13, RawBenchmarkRows: 23, CoveredByPerJobFiles: 9, FailedRunRows: 2,
		RunStatsNew: 16, GPUMetricSamplesNew: demoSamples, PowerPublicationPoints: 7}, first.Stats)
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
	require.Equal(t, 8, e.count(`SELECT count(*) FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id
		WHERE w.github_run_id = $1 AND w.run_attempt = 2 AND b.date = '2026-11-20' AND b.ingest_id = $2`, demoRunID, first.IngestID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM configs WHERE hardware = 'b200' AND model = 'qwen3.5' AND num_prefill_gpu = 8`))
	require.Equal(t, "completed_with_failures", e.ledgerStatus(first.IngestID))

	before := e.checksums(dataTables...)
	second := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{New: 0, Duplicate: 8, Skipped: 12, Unmapped: 2, Failed: 1}, second.Rows.Benchmark)
	require.EqualValues(t, 0, second.Stats.RunStatsNew)
	require.EqualValues(t, 16, second.Stats.RunStatsDuplicate)
	require.Zero(t, second.Details.BenchmarkRowsUpdated)
	requireDemoTelemetry(t, e, second, true)
	require.Equal(t, before, e.checksums(dataTables...), "a rerun leaves every table byte-identical")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM ingests`), "each ingest has its ledger row")
	require.NotEqual(t, first.IngestID, second.IngestID)
}

// The report of the demo run, rendered from its summary, is stable.
func TestDemoRunReportGolden(t *testing.T) {
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
	require.EqualValues(t, 8, dry2.Rows.Benchmark.Duplicate)
	require.Equal(t, after, e.checksums(all...))
}

func (e *env) ledgerStatus(id int64) string {
	e.t.Helper()
	var status string
	require.NoError(e.t, e.pool().QueryRow(context.Background(), `SELECT status FROM ingests WHERE id = $1`, id).Scan(&status))
	return status
}
