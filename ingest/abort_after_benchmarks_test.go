package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// conc32Agentic is the demo's AgentX point without a raw sibling.
const conc32Agentic = "bmk_agentic_qwen3.5_tp8_conc32_kvnone_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc32_b200-nb_0_recipe-7122523243b3712a"

// setDataset rewrites the dataset slug of one AgentX aggregate.
func setDataset(t *testing.T, dir, artifact, from, to string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, artifact, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	s := strings.Replace(string(b), from, to, 1)
	require.NotEqual(t, string(b), s)
	require.NoError(t, os.WriteFile(files[0], []byte(s), 0o644))
}

// A stage that fails after the benchmark rows and evals were staged (two
// dataset slugs in one run abort the trace stage) rolls everything back;
// the ledger's summary of the aborted attempt claims nothing was read or
// written, and a clean ingest afterwards lands the whole run.
func TestAbortAfterBenchmarksLeavesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	const slug, other = "semianalysisai/cc-traces-weka-062126", "semianalysisai/cc-traces-other-010126"
	setDataset(t, dir, conc32Agentic, slug, other)
	before := e.checksums(dataTables...)
	sum, err := e.ingest(dir, ingest.Config{})
	require.ErrorContains(t, err, "dataset")
	require.Equal(t, schema.StatusAborted, sum.Status)
	require.Equal(t, before, e.checksums(dataTables...), "nothing written")

	var raw []byte
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT summary FROM ingests WHERE id = $1 AND status = 'aborted'`, sum.IngestID).Scan(&raw))
	var stored schema.Summary
	require.NoError(t, json.Unmarshal(raw, &stored))
	require.Equal(t, schema.Rows{}, stored.Rows)
	require.Equal(t, schema.Stats{}, stored.Stats)
	require.Zero(t, stored.Details.ConfigsNew, "no config was written")
	require.Zero(t, stored.Details.EvalRows)
	require.Zero(t, stored.Details.EvalSampleTextsNew)
	require.Equal(t, "listing", stored.Details.AttemptOrder)
	require.NoError(t, report.CheckInvariant(&stored))

	setDataset(t, dir, conc32Agentic, other, slug)
	clean := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 12, clean.Rows.Benchmark.New)
	require.Equal(t, schema.Counts{New: 3, Duplicate: 3, Skipped: 1}, clean.Rows.Eval)
	require.Equal(t, schema.Counts{New: 3, Skipped: 1}, clean.Rows.Trace)
}

// The run's dataset is collected over every raw row, aggregates included:
// an aggregate row naming another dataset than the AgentX files aborts
// the ingest, naming where each slug was read.
func TestDatasetConflictInTheAggregateAborts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	files, err := filepath.Glob(filepath.Join(dir, conc32Agentic, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	row, err := os.ReadFile(files[0])
	require.NoError(t, err)
	other := strings.Replace(string(row), "semianalysisai/cc-traces-weka-062126", "semianalysisai/cc-traces-other-010126", 1)
	require.NotEqual(t, string(row), other)
	agg := filepath.Join(dir, "results_bmk", "agg_bmk.json")
	b, err := os.ReadFile(agg)
	require.NoError(t, err)
	s := strings.TrimRight(string(b), " \n")
	require.True(t, strings.HasSuffix(s, "]"))
	require.NoError(t, os.WriteFile(agg, []byte(strings.TrimSuffix(s, "]")+",\n"+other+"\n]\n"), 0o644))

	before := e.checksums(dataTables...)
	sum, err := e.ingest(dir, ingest.Config{})
	require.ErrorContains(t, err, "conflicting dataset provenance")
	require.ErrorContains(t, err, "results_bmk/agg_bmk.json")
	require.Equal(t, schema.StatusAborted, sum.Status)
	require.Equal(t, before, e.checksums(dataTables...), "nothing written")
}
