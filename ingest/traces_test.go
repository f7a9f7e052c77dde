package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

const agentxRunID = 28490000001

// agentxPoints is an AgentX run with every layout and edge case: three
// good layouts, a missing sibling, an unreadable trace and a truncated
// server log tarball (whose trace is fine).
func agentxPoints() []generate.AgentXOptions {
	return []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 4},
		{Layout: generate.AgentXNested, Conc: 8, Framework: "vllm"},
		{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1"},
		{Layout: generate.AgentXSingleNode, Conc: 32, OmitRaw: true},
		{Layout: generate.AgentXSingleNode, Conc: 64, TruncateProfile: true},
		{Layout: generate.AgentXMultinode, Conc: 2, Runner: "gb200-nv_2", TruncateTarball: true},
	}
}

func agentxTree(t *testing.T, points []generate.AgentXOptions) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, generate.WriteAgentXRun(dir, agentxRunID, points))
	return dir
}

// checkTraceInvariant: every AgentX row lands in exactly one column.
func checkTraceInvariant(t *testing.T, sum *schema.Summary) {
	t.Helper()
	require.Equal(t, sum.Details.TraceRowsRead, sum.Rows.Trace.Total(), "trace row: %+v", sum.Rows.Trace)
}

func TestTracesFirstIngestAndRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, agentxPoints())

	first := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, first)
	require.Equal(t, schema.Counts{New: 6}, first.Rows.Benchmark)
	require.Equal(t, schema.Counts{New: 4, Skipped: 1, Failed: 1}, first.Rows.Trace, "%+v", first.Failures)
	require.EqualValues(t, 4, first.Details.TraceSidecarsNew)
	require.EqualValues(t, 4, first.Details.ServerLogsNew, "every point but the one without raw artifacts and the truncated tarball")
	require.EqualValues(t, 4, first.Details.ServerLogRowsLinked)
	require.Equal(t, schema.StatusCompletedWithFailures, first.Status)

	// The missing sibling is a note, the unreadable trace and the truncated
	// tarball are failures naming artifact, file and reason.
	require.True(t, hasNote(first, "missing sibling artifact agentic_"), "%v", first.Notes)
	var traceFail, logFail *schema.Failure
	for i, f := range first.Failures {
		switch f.Category {
		case schema.CategoryTrace:
			traceFail = &first.Failures[i]
		case schema.CategoryRun:
			logFail = &first.Failures[i]
		}
	}
	require.NotNil(t, traceFail)
	require.Contains(t, traceFail.Artifact, "_conc64_")
	require.Equal(t, "aiperf_artifacts/profile_export.jsonl", traceFail.File)
	require.Contains(t, traceFail.Reason, "truncated")
	require.NotNil(t, logFail)
	require.True(t, strings.HasPrefix(logFail.Artifact, "multinode_server_logs_"), logFail.Artifact)
	require.Equal(t, "multinode_server_logs.tar.gz", logFail.File)
	require.Contains(t, logFail.Reason, "truncated tarball")

	require.Equal(t, 4, e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`))
	require.Equal(t, 4, e.count(`SELECT count(*) FROM benchmark_results WHERE server_log_id IS NOT NULL`))
	// The multinode tarball is stored entry by entry.
	require.Equal(t, 3, e.count(`SELECT count(*) FROM server_log_files WHERE file_name LIKE 'multinode_server_logs/logs/%'`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM run_datasets WHERE dataset_slug = 'cc-traces-weka-062126'`))
	// Every row linked to a trace serves the hit rate of its
	// server_metrics_export.csv (the same counters the sidecar's JSON-derived
	// rate sums) under server_gpu_cache_hit_rate, the producer's under
	// published_server_gpu_cache_hit_rate; the sidecar's rate stays in the
	// sidecar.
	require.Equal(t, 4, e.count(`SELECT count(*) FROM benchmark_results b JOIN agentic_trace_replay t ON t.id = b.trace_replay_id
		WHERE abs((b.metrics->>'server_gpu_cache_hit_rate')::float8 - (t.derived_metrics->>'derived_gpu_cache_hit_rate')::float8) < 1e-6
		AND b.metrics ? 'published_server_gpu_cache_hit_rate' AND NOT b.metrics ? 'derived_gpu_cache_hit_rate'`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE layout = 'nested'`))
	require.Equal(t, 2, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE layout = 'multinode'`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE layout = 'single-node'`))
	// The payloads are at the dashboard's versions; the request timeline
	// (jsonb) has one entry per timed record of the stored profile.
	require.Equal(t, 4, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE aggregate_stats->>'version' = '10'
		AND chart_series->>'version' = '20' AND request_timeline->>'version' = '6' AND request_timeline_digest IS NULL`))
	rows, err := e.pool().Query(context.Background(),
		`SELECT profile_export_digest, jsonb_array_length(request_timeline->'requests') FROM agentic_trace_replay`)
	require.NoError(t, err)
	timelines := 0
	for rows.Next() {
		var digest []byte
		var n int
		require.NoError(t, rows.Scan(&digest, &n))
		timed := 0
		for _, line := range strings.Split(string(e.blob(digest)), "\n") {
			if strings.Contains(line, `"request_end_ns"`) && strings.Contains(line, `"request_start_ns"`) {
				timed++
			}
		}
		require.Positive(t, n)
		require.Equal(t, timed, n)
		timelines++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 4, timelines)
	// Blobs decompress to what was read.
	var size, stored int64
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT sum(size), sum(stored_size) FROM trace_blobs`).Scan(&size, &stored))
	require.Greater(t, size, stored)
	var profileDigest []byte
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT profile_export_digest FROM agentic_trace_replay WHERE layout = 'nested'`).Scan(&profileDigest))
	nested, err := filepath.Glob(filepath.Join(dir, "agentic_*", "aiperf_artifacts", "run_0", "profile_export.jsonl"))
	require.NoError(t, err)
	require.Len(t, nested, 1)
	want, err := os.ReadFile(nested[0])
	require.NoError(t, err)
	require.Equal(t, want, e.blob(profileDigest), "the stored profile is the file, byte for byte")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM trace_blobs b WHERE b.stored_size <> (SELECT coalesce(sum(length(data)), 0) FROM trace_blob_chunks c WHERE c.digest = b.digest)`))

	// What each layout stored, derived from the generated profiles and
	// exports (the generator is deterministic).
	var sidecars json.RawMessage
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT jsonb_agg(jsonb_build_object(
		'layout', layout, 'sourceDir', source_dir, 'profileSize', profile_export_size,
		'hasMetricsJSON', server_metrics_json_digest IS NOT NULL, 'hasMetricsCSV', server_metrics_csv_digest IS NOT NULL,
		'aggregateStats', aggregate_stats, 'chartVersion', chart_series->'version',
		'timeslices', chart_series->'timeslicesCount', 'derivedMetrics', derived_metrics,
		'kvCachePoolTokens', kv_cache_pool_tokens) ORDER BY layout, source_dir)
		FROM agentic_trace_replay`).Scan(&sidecars))
	goldenJSON(t, "testdata/traces/layouts.golden.json", sidecars)
	var logs json.RawMessage
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT jsonb_agg(jsonb_build_object(
		'primary', l.primary_file, 'files', l.file_count, 'kvCachePoolTokens', l.kv_cache_pool_tokens,
		'names', (SELECT jsonb_agg(f.file_name ORDER BY f.file_name) FROM server_log_files f WHERE f.server_log_id = l.id))
		ORDER BY l.primary_file, l.source_artifact) FROM server_logs l`).Scan(&logs))
	goldenJSON(t, "testdata/traces/server_logs.golden.json", logs)

	tables := append([]string{"trace_blobs", "trace_blob_chunks", "agentic_trace_replay", "server_logs", "server_log_files", "run_datasets"}, dataTables...)
	before := e.checksums(tables...)
	second := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, second)
	require.Equal(t, schema.Counts{Duplicate: 4, Skipped: 1, Failed: 1}, second.Rows.Trace)
	require.Zero(t, second.Details.TraceBlobsNew, "a rerun writes no blob")
	require.Zero(t, second.Details.TraceBlobBytesNew)
	require.Zero(t, second.Details.TraceSidecarsNew)
	require.Zero(t, second.Details.ServerLogsNew)
	require.Zero(t, second.Details.ServerLogRowsLinked)
	require.Equal(t, before, e.checksums(tables...), "a rerun changes nothing")
}

// blob reads a stored blob back: its chunks in order, gunzipped.
func (e *env) blob(digest []byte) []byte {
	e.t.Helper()
	var data []byte
	require.NoError(e.t, e.pool().QueryRow(context.Background(),
		`SELECT string_agg(data, ''::bytea ORDER BY seq) FROM trace_blob_chunks WHERE digest = $1`, digest).Scan(&data))
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(e.t, err)
	out, err := io.ReadAll(zr)
	require.NoError(e.t, err)
	sum := sha256.Sum256(out)
	require.Equal(e.t, digest, sum[:], "a blob is addressed by the sha256 of its content")
	return out
}

func hasNote(sum *schema.Summary, part string) bool {
	for _, n := range sum.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// A later retry's aggregate replaces a linked row's metrics; the
// trace-derived values stay under their derived_* names, the server-metric
// keys the ingest owns are derived again from the raw export, and the
// retry's published values are the producer's (published_<key>) and the
// rest of its metrics exactly (reference benchmark-ingest-retry).
func TestTraceDerivedMetricsSurviveARetriedAggregate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, agentxPoints()[:1])
	e.mustIngest(dir, ingest.Config{})
	var served, fill float64
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT (metrics->>'server_gpu_cache_hit_rate')::float8,
		(metrics->>'derived_median_full_response_itl')::float8 FROM benchmark_results`).Scan(&served, &fill))

	// The retry's aggregate: other throughput, other hit rate, no
	// full-response ITL.
	files, err := filepath.Glob(filepath.Join(dir, "bmk_agentic_*", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var row map[string]any
	require.NoError(t, json.Unmarshal(raw, &row))
	rm := row["request_metrics"].(map[string]any)
	delete(rm["latency"].(map[string]any), "full_response_itl")
	delete(rm["latency"].(map[string]any), "full_response_intvty")
	rm["throughput"].(map[string]any)["per_gpu"].(map[string]any)["total_tput_tps"] = 396.14743
	row["server_metrics"].(map[string]any)["cache"].(map[string]any)["gpu_cache_hit_rate"] = 0.21678
	writeFile(t, files[0], mustJSON(t, row))

	sum := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, sum)
	require.EqualValues(t, 1, sum.Details.BenchmarkRowsUpdated)
	require.Equal(t, schema.Counts{Duplicate: 1}, sum.Rows.Trace)
	var tput, hit, published, itl float64
	var publishedITL *float64
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT (metrics->>'tput_per_gpu')::float8,
		(metrics->>'server_gpu_cache_hit_rate')::float8, (metrics->>'published_server_gpu_cache_hit_rate')::float8,
		(metrics->>'median_full_response_itl')::float8, (metrics->>'derived_median_full_response_itl')::float8
		FROM benchmark_results`).Scan(&tput, &hit, &published, &publishedITL, &itl))
	require.Equal(t, 396.14743, tput, "the retry's aggregate won")
	require.Equal(t, 0.21678, published, "the retry's published hit rate is kept, traceable")
	require.Equal(t, served, hit, "the served hit rate is the export's again")
	require.Nil(t, publishedITL, "the retry publishes no full-response ITL, and none is made up")
	require.Equal(t, fill, itl)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`))
	require.Contains(t, strings.Join(sum.Notes, "\n"), "server metric warnings", "0.21678 is far from the export's rate")

	before := e.checksums(dataTables...)
	e.mustIngest(dir, ingest.Config{})
	require.Equal(t, before, e.checksums(dataTables...), "idempotent after the repair")
}

func TestDatasetProvenance(t *testing.T) {
	t.Parallel()
	t.Run("two slugs abort the ingest", func(t *testing.T) {
		e := newEnv(t)
		dir := agentxTree(t, []generate.AgentXOptions{
			{Conc: 4},
			{Conc: 8, Dataset: "semianalysisai/cc-traces-other-010126"},
		})
		sum, err := e.ingest(dir, ingest.Config{})
		require.Error(t, err)
		require.Contains(t, err.Error(), `conflicting dataset provenance in workflow run 28490000001: "cc-traces-other-010126"`)
		require.Equal(t, schema.StatusAborted, sum.Status)
		require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results`))
		require.Zero(t, e.count(`SELECT count(*) FROM trace_blobs`))
	})
	t.Run("an unknown slug is unmapped", func(t *testing.T) {
		e := newEnv(t)
		dir := agentxTree(t, []generate.AgentXOptions{{Conc: 4, Dataset: "someone/new-traces/"}})
		sum := e.mustIngest(dir, ingest.Config{})
		require.Equal(t, []string{"new-traces"}, sum.Unmapped.Datasets)
		require.Equal(t, 1, e.count(`SELECT count(*) FROM run_datasets WHERE dataset_slug = 'new-traces'`))
	})
}
