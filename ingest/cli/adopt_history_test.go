package cli_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// referenceTables are the reference's tables a copy fills, in key order.
var referenceTables = []string{"configs", "workflow_runs", "server_logs", "server_log_files", "agentic_trace_replay",
	"benchmark_results", "run_stats", "eval_results", "eval_samples", "changelog_entries", "availability",
	"datasets", "dataset_conversations", "run_datasets", "gpu_metric_series", "gpu_metric_samples", "gpu_metric_gpu_stats",
	"benchmark_result_gpu_metrics"}

// powerxRevision digests what the site's PowerX reads return for every
// series (docs/dashboard-schema.md, "PowerX reads"): ids, versions,
// sidecars, links, digests and samples.
func powerxRevision(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var series int64
	var d string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM gpu_metric_series), md5(concat_ws(E'\n',
		(SELECT string_agg(jsonb_build_array(s.id, s.workflow_run_id, s.artifact_name, s.file_name, s.vendor, s.ingested_at,
			s.csv_sha256, s.sample_count, s.sidecars, coalesce((to_jsonb(s)->>'stats_version')::integer, 0),
			(SELECT jsonb_agg(l.benchmark_result_id ORDER BY l.benchmark_result_id) FROM benchmark_result_gpu_metrics l
			 WHERE l.series_id = s.id))::text, E'\n' ORDER BY s.id) FROM gpu_metric_series s),
		(SELECT string_agg(g::text, E'\n' ORDER BY g::text) FROM gpu_metric_gpu_stats g),
		(SELECT string_agg(m::text, E'\n' ORDER BY m.series_id, m.gpu_index, m.sampled_at) FROM gpu_metric_samples m)))`).
		Scan(&series, &d))
	require.Positive(t, series, "the run has GPU metric series")
	return d
}

// referenceCopyOf builds a database in the reference's shape (level 017)
// holding the rows the reference would have written for what ours holds:
// each table's reference columns read through our dashboard schema (which
// gives the reference's columns back), the raw server metrics CSV
// unpacked from our blob.
func referenceCopyOf(t *testing.T, ours string) string {
	t.Helper()
	return referenceCopyAt(t, ours, refdb.Level017)
}

// referenceCopyAt is referenceCopyOf at a reference level: the tables and
// columns the level has.
func referenceCopyAt(t *testing.T, ours, level string) string {
	t.Helper()
	ctx := t.Context()
	src := dashboardConn(t, ours)
	ref := pgtest.NewEmpty(t)
	dst, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer dst.Close(context.WithoutCancel(ctx))
	require.NoError(t, refdb.Create(ctx, dst, level))
	for _, table := range referenceTables {
		var exists bool
		require.NoError(t, dst.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists))
		if !exists {
			continue
		}
		q, err := dst.Query(ctx, `SELECT attname::text FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0
			AND NOT attisdropped AND attname <> 'server_metrics_csv' ORDER BY attnum`, table)
		require.NoError(t, err)
		cols, err := pgx.CollectRows(q, pgx.RowTo[string])
		require.NoError(t, err)
		from := table
		switch table {
		case "changelog_entries": // the reference keeps the last entry of each pair of refs
			from = `(SELECT DISTINCT ON (workflow_run_id, base_ref, head_ref) * FROM changelog_entries
				ORDER BY workflow_run_id, base_ref, head_ref, entry_index DESC) c`
		case "eval_samples": // and the last line of each document (not the strict-match line the view shows)
			from = `(SELECT DISTINCT ON (s.eval_result_id, s.doc_id) s.id, s.eval_result_id, s.doc_id, p.content AS prompt,
				s.target, s.response, s.passed, s.score::numeric AS score, s.metrics,
				coalesce(s.data, '{}') || jsonb_strip_nulls(jsonb_build_object('doc', d.content::jsonb, 'resps', r.content::jsonb,
					'filter', nullif(s.filter, ''), 'filtered_resps', s.filtered_resps)) AS data
				FROM public.eval_samples s
				LEFT JOIN public.eval_sample_texts p ON p.digest = s.prompt_digest
				LEFT JOIN public.eval_sample_texts d ON d.digest = s.doc_digest
				LEFT JOIN public.eval_sample_texts r ON r.digest = s.resps_digest
				ORDER BY s.eval_result_id, s.doc_id, s.source_line DESC) s`
		}
		q, err = src.Query(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "), from))
		require.NoError(t, err, table)
		rows, err := pgx.CollectRows(q, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		require.NoError(t, err, table)
		if table == "benchmark_results" {
			// the metrics without the keys our traces stage derives, as
			// the reference stores them
			m := slices.Index(cols, "metrics")
			for _, v := range rows {
				v[m] = withoutDerived(v[m].(map[string]any))
			}
		}
		_, err = dst.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		require.NoError(t, err, table)
		if cols[0] == "id" && table != "datasets" {
			_, err = dst.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', 'id'), greatest(max(id), 1)) FROM %[1]s`, table))
			require.NoError(t, err, table)
		}
	}
	q, err := src.Query(ctx, `SELECT t.id, (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM public.trace_blob_chunks c
		WHERE c.digest = t.server_metrics_csv_digest) FROM public.agentic_trace_replay t WHERE t.server_metrics_csv_digest IS NOT NULL`)
	require.NoError(t, err)
	csvs, err := pgx.CollectRows(q, func(r pgx.CollectableRow) ([2]any, error) {
		var id int64
		var gz []byte
		err := r.Scan(&id, &gz)
		return [2]any{id, gz}, err
	})
	require.NoError(t, err)
	for _, c := range csvs {
		zr, err := gzip.NewReader(bytes.NewReader(c[1].([]byte)))
		require.NoError(t, err)
		raw, err := io.ReadAll(zr)
		require.NoError(t, err)
		_, err = dst.Exec(ctx, `UPDATE agentic_trace_replay SET server_metrics_csv = $2 WHERE id = $1`, c[0], raw)
		require.NoError(t, err)
	}
	return ref
}

// withoutDerived is a row's metrics without what our traces stage writes
// into them: the derived_* keys, and on an AgentX row the owned
// server-metric keys, the producer's values back under their names.
func withoutDerived(m map[string]any) map[string]any {
	for k := range m {
		if strings.HasPrefix(k, "derived_") {
			delete(m, k)
		}
	}
	if _, ours := m[trace.ServerMetricsMarker]; ours {
		delete(m, trace.ServerMetricsMarker)
		for _, k := range trace.ServerMetricKeys {
			delete(m, k)
			if v, ok := m[trace.PublishedPrefix+k]; ok {
				m[k] = v
				delete(m, trace.PublishedPrefix+k)
			}
		}
	}
	return m
}

// TestAdoptContinuesHistory: the demo run as the reference stored it
// (AgentX rows without the keys our traces stage derives), adopted;
// ingesting the same run again finds every benchmark point, eval, eval
// sample, AgentX trace and run-stats row the reference stored (0 new), and
// the site's reads return what they returned after adopt (trace ids and
// every metric included: adopt derived the AgentX rows' server metrics and
// derived_* keys as the rerun does), but for the changelog entry the
// reference overwrote (restored).
//
// Without a profile: the reference stored the vLLM point's trace without
// its profile export, and the run tree lacks it too. Adopt keeps the trace
// so; the rerun fails that point (no profile) and changes nothing either.
func TestAdoptContinuesHistory(t *testing.T) {
	t.Run("as stored", func(t *testing.T) { adoptContinuesHistory(t, false) })
	t.Run("without a profile", func(t *testing.T) { adoptContinuesHistory(t, true) })
}

func adoptContinuesHistory(t *testing.T, withoutProfile bool) {
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	ours := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, map[string]string{"DATABASE_URL": ours}, "load", demo))

	ref := referenceCopyOf(t, ours)
	vars := map[string]string{"DATABASE_URL": ref}
	if withoutProfile {
		admin, err := pgx.Connect(t.Context(), ref)
		require.NoError(t, err)
		tag, err := admin.Exec(t.Context(), `UPDATE agentic_trace_replay SET profile_export_jsonl_gz = NULL,
			profile_export_uncompressed_size = NULL
			WHERE id IN (SELECT b.trace_replay_id FROM benchmark_results b JOIN configs c ON c.id = b.config_id
				WHERE c.framework = 'vllm' AND b.benchmark_type = 'agentic_traces')`)
		require.NoError(t, err)
		require.Equal(t, int64(1), tag.RowsAffected())
		require.NoError(t, admin.Close(t.Context()))
		profiles, err := filepath.Glob(filepath.Join(demo, "agentic_*_vllm_*", "aiperf_artifacts", "run_0", "profile_export.jsonl"))
		require.NoError(t, err)
		require.Len(t, profiles, 1)
		require.NoError(t, os.Remove(profiles[0]))
	}
	requireCode(t, cli.ExitOK, run(t, vars, "adopt"))

	conn := dashboardConn(t, ref)
	f := demoFacts{dir: demo, runID: 28485856738}
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT er.id FROM eval_results er JOIN configs c ON c.id = er.config_id
		WHERE c.hardware = 'b200' AND er.task = 'gsm8k'`).Scan(&f.evalResult))
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT br.id FROM benchmark_results br JOIN configs c ON c.id = br.config_id
		WHERE br.benchmark_type = 'agentic_traces' AND br.conc = 4 AND c.framework = 'sglang'`).Scan(&f.agentic))
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT br.id FROM benchmark_results br JOIN configs c ON c.id = br.config_id
		WHERE br.benchmark_type = 'agentic_traces' AND c.framework = 'dynamo-sglang' AND c.disagg`).Scan(&f.disagg))
	var derived, marked int64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE EXISTS (SELECT 1 FROM jsonb_object_keys(metrics) k
		WHERE k LIKE 'derived\_%')), count(*) FILTER (WHERE metrics ? 'server_metrics_version')
		FROM benchmark_results WHERE benchmark_type = 'agentic_traces'`).Scan(&derived, &marked))
	require.Positive(t, derived, "adopt writes the derived_* keys into the AgentX rows")
	require.Positive(t, marked, "adopt derives the AgentX rows' server metrics")
	before := siteReads(t, conn, []demoFacts{f}, false)
	powerBefore := powerxRevision(t, conn)
	var samplesBefore int64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM public.eval_samples`).Scan(&samplesBefore))

	summary := filepath.Join(t.TempDir(), "summary.json")
	again := run(t, vars, "load", demo, "--summary-json", summary)
	var sum struct {
		Rows    schema.Rows    `json:"rows"`
		Stats   schema.Stats   `json:"stats"`
		Details schema.Details `json:"details"`
	}
	b, err := os.ReadFile(summary)
	require.NoError(t, err, again.String())
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Zero(t, sum.Rows.Benchmark.New, "benchmark points the reference stored")
	require.Zero(t, sum.Rows.Eval.New, "evals the reference stored")
	// The reference kept no profile_export_aiperf.json: the traces stage
	// finds the adopted trace by the row it serves and the files the
	// reference kept (docs/operations.md).
	require.Zero(t, sum.Rows.Trace.New, "traces the reference stored")
	require.NotZero(t, sum.Rows.Trace.Duplicate, "traces the reference stored")
	require.Zero(t, sum.Details.TraceSidecarsNew, "traces the reference stored")
	require.Zero(t, sum.Stats.RunStatsNew)
	// The GPU metric series the reference stored are the run's files:
	// kept, ids and all.
	require.Zero(t, sum.Rows.Power.New, "GPU metric series the reference stored")
	require.Positive(t, sum.Rows.Power.Duplicate)
	require.Equal(t, powerBefore, powerxRevision(t, conn))
	// The reference kept one filter line per document: the adopted row
	// stands for it, and the other lines count as duplicates.
	require.Zero(t, sum.Stats.EvalSamplesNew, "eval samples of documents the reference stored")
	require.Positive(t, sum.Details.EvalSamplesDuplicate)
	var samplesAfter int64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM public.eval_samples`).Scan(&samplesAfter))
	require.Equal(t, samplesBefore, samplesAfter)

	after := siteReads(t, dashboardConn(t, ref), []demoFacts{f}, false)
	for read, rows := range before {
		switch {
		case strings.HasPrefix(read, "workflow-info.ts: getChangelogByDate"):
			// The reference kept one entry per pair of refs; the run's
			// own ingest restores the entry it overwrote.
			require.Subset(t, after[read], rows, read)
			require.Len(t, after[read], 2, read)
		default:
			require.ElementsMatch(t, rows, after[read], read)
		}
	}
}

// TestAdoptContinuesHistoryAtLevel010: a run as the fork's reference
// ingest (level 010) stores it — no recipe fingerprint, a single-node
// config's GPUs counted as tp × ep, a single-node SGLang eval under a 1P/1D
// disaggregated config — adopted; ingesting the run again finds every
// benchmark point, eval and eval sample the reference stored (0 new) and
// leaves their values as they are.
func TestAdoptContinuesHistoryAtLevel010(t *testing.T) {
	dir := t.TempDir()
	_, err := generate.Write(dir, generate.Options{Points: 16, Seed: 2, Evals: 2, EvalDocs: 5, AgentX: 3})
	require.NoError(t, err)
	ours := pgtest.New(t)
	requireCode(t, cli.ExitOK, run(t, map[string]string{"DATABASE_URL": ours}, "load", dir))

	ref := referenceCopyAt(t, ours, refdb.Level010)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	configs, evals, err := refdb.RekeyAsReference(ctx, conn)
	require.NoError(t, err)
	require.Positive(t, configs, "a single-node config with ep > 1: the reference counts tp x ep GPUs")
	require.Positive(t, evals, "a single-node SGLang eval: the reference's 1P/1D config")

	vars := map[string]string{"DATABASE_URL": ref}
	requireCode(t, cli.ExitOK, run(t, vars, "adopt"))
	// verify knows an adopted run: its rows written by no ingest of ours.
	runID := strconv.FormatInt(generate.DefaultRunID, 10)
	requireCode(t, cli.ExitOK, run(t, vars, "verify", "--run-id", runID))
	stored := func() map[string]int64 {
		out := map[string]int64{}
		for _, q := range []string{
			`SELECT count(*) FROM benchmark_results`,
			`SELECT count(*) FROM eval_results`,
			`SELECT count(*) FROM eval_samples`,
			`SELECT count(*) FROM configs c WHERE EXISTS (SELECT 1 FROM benchmark_results b WHERE b.config_id = c.id)
				OR EXISTS (SELECT 1 FROM eval_results e WHERE e.config_id = c.id)`,
			`SELECT count(*) FROM benchmark_results b JOIN ingests g ON g.id = b.ingest_id WHERE g.target = 'adopted'`,
			`SELECT count(*) FROM eval_results WHERE source_artifact = 'adopted'`,
			// the values: a changed row changes the sum of its hashes. An
			// AgentX row whose multinode server log bundle the reference
			// never stored gains what the bundle's files give (a new
			// server log is new information); the others keep theirs.
			`SELECT sum(hashtext(b.id || ':' || b.config_id || ':' || b.metrics::text)) FROM benchmark_results b
				WHERE b.benchmark_type = 'single_turn'`,
			`SELECT sum(hashtext(e.id || ':' || e.config_id || ':' || e.metrics::text)) FROM eval_results e`,
		} {
			var n int64
			require.NoError(t, conn.QueryRow(ctx, q).Scan(&n), q)
			out[q] = n
		}
		return out
	}
	before := stored()

	summary := filepath.Join(t.TempDir(), "summary.json")
	again := run(t, vars, "load", dir, "--summary-json", summary)
	var sum struct {
		Rows    schema.Rows    `json:"rows"`
		Stats   schema.Stats   `json:"stats"`
		Details schema.Details `json:"details"`
	}
	b, err := os.ReadFile(summary)
	require.NoError(t, err, again.String())
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Zero(t, sum.Rows.Benchmark.New, "benchmark points the reference stored")
	require.Positive(t, sum.Rows.Benchmark.Duplicate)
	require.Zero(t, sum.Details.BenchmarkRowsUpdated, "adopted rows keep their values")
	require.Zero(t, sum.Rows.Eval.New, "evals the reference stored")
	require.Zero(t, sum.Details.EvalRowsUpdated, "adopted evals keep their values")
	require.Zero(t, sum.Stats.EvalSamplesNew, "eval samples of documents the reference stored")
	require.Equal(t, before, stored())
	requireCode(t, cli.ExitOK, run(t, vars, "verify", "--run-id", runID))
}
