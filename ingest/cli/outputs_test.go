package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

const mdMarker = "<!-- ingest-report source-run=28485856738 -->"

// TestSideOutputs checks --summary-json, --unmapped-output and
// GITHUB_STEP_SUMMARY on the demo, which has an unmapped hardware value.
func TestSideOutputs(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	unmappedPath := filepath.Join(dir, "unmapped-entities.json")
	stepSummary := filepath.Join(dir, "step-summary.md")
	require.NoError(t, os.WriteFile(stepSummary, []byte("earlier step\n"), 0o644))
	vars := map[string]string{"GITHUB_STEP_SUMMARY": stepSummary}

	first := run(t, vars, "demo", "--database-url", db, "--format", "json",
		"--summary-json", summaryPath, "--unmapped-output", unmappedPath)
	requireCode(t, cli.ExitOK, first)
	written, err := os.ReadFile(summaryPath)
	require.NoError(t, err)
	require.Equal(t, first.stdout, string(written), "the summary file is the JSON report")
	s := parseSummary(t, string(written))
	require.Equal(t, demoFirst, s.Rows.Benchmark)
	requireDemoStats(t, s.Stats, 16, 0)

	unmapped, err := os.ReadFile(unmappedPath)
	require.NoError(t, err)
	require.JSONEq(t, `{"models": [], "hardware": ["a100-lab"], "precisions": [], "datasets": [],
		"frameworks": [], "specMethods": []}`, string(unmapped))

	step, err := os.ReadFile(stepSummary)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(step), "earlier step\n"+mdMarker+"\n"), "the job summary is appended to:\n%s", step)
	require.Equal(t, 1, strings.Count(string(step), mdMarker))
	require.Contains(t, string(step), "| benchmark | 12 ")

	// A rerun replaces the summary file and appends a second report.
	second := run(t, vars, "demo", "--database-url", db, "--format", "text",
		"--summary-json", summaryPath, "--unmapped-output", unmappedPath)
	requireCode(t, cli.ExitOK, second)
	written, err = os.ReadFile(summaryPath)
	require.NoError(t, err)
	s = parseSummary(t, string(written))
	require.Equal(t, demoRerun, s.Rows.Benchmark, "the summary file holds the rerun")
	step, err = os.ReadFile(stepSummary)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(step), mdMarker))
	require.Contains(t, string(step), "| benchmark | 0 ")

	leftovers, err := filepath.Glob(filepath.Join(dir, "*tmp*"))
	require.NoError(t, err)
	require.Empty(t, leftovers, "no temporary files left behind")
}

// TestSideOutputsCleanRun checks that a run with nothing unmapped writes no
// unmapped-entities.json, and the summary path from INGEST_SUMMARY_JSON.
func TestSideOutputsCleanRun(t *testing.T) {
	t.Parallel()
	tree, m := genTree(t, generate.Options{Points: 2, Seed: 3})
	db := pgtest.New(t)
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	unmappedPath := filepath.Join(dir, "unmapped-entities.json")
	stepSummary := filepath.Join(dir, "step-summary.md")
	vars := map[string]string{
		"INGEST_SUMMARY_JSON":      summaryPath,
		"UNMAPPED_ENTITIES_OUTPUT": unmappedPath,
		"GITHUB_STEP_SUMMARY":      stepSummary,
	}
	r := run(t, vars, "load", tree, "--database-url", db)
	requireCode(t, cli.ExitOK, r)

	_, err := os.Stat(unmappedPath)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing unmapped, no file")
	written, err := os.ReadFile(summaryPath)
	require.NoError(t, err)
	require.Equal(t, int64(m.Points), parseSummary(t, string(written)).Rows.Benchmark.New)
	step, err := os.ReadFile(stepSummary)
	require.NoError(t, err, "GITHUB_STEP_SUMMARY is created when missing")
	require.True(t, strings.HasPrefix(string(step), mdMarker), string(step))
}

// TestStepSummaryUnwritable: a job summary that cannot be written is only a
// warning; the ingest still succeeds.
func TestStepSummaryUnwritable(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	vars := map[string]string{"GITHUB_STEP_SUMMARY": filepath.Join(t.TempDir(), "missing-dir", "summary.md")}
	r := run(t, vars, "demo", "--database-url", db)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, "could not write the job summary")
	require.Equal(t, int64(12), count(t, db, "benchmark_results"))
}

// TestSideOutputUnwritable: an output path that cannot be written (a
// directory here; /dev/full alike) is an error naming the option and the
// path, and the exit code says so — even for demo, whose designed
// failures alone exit 0 — while the directory is left as it was.
func TestSideOutputUnwritable(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	dir := t.TempDir()
	r := run(t, nil, "demo", "--database-url", db, "--summary-json", dir)
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stderr, "ingest: --summary-json "+dir+": ")
	require.Contains(t, r.stderr, "is a directory")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the directory was written into")
	info, err := os.Stat(dir)
	require.NoError(t, err)
	require.True(t, info.IsDir())
}
