package cli_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/ingest/trace"
)

// referenceCopy is one table copied from a database of ours into a
// reference-shaped one: the SELECT on ours yields the reference's columns
// with its documented differences (docs/reference-schema.md, "What the
// reference's ETL writes") applied.
type referenceCopy struct {
	table  string
	cols   []string
	query  string
	adjust func(v []any) // rewrites a row's values in place
}

// referenceOf builds a reference database at level holding what the
// reference's ETL would have written for the run ours holds.
func referenceOf(t *testing.T, ours, level string) string {
	t.Helper()
	ctx := context.Background()
	ref := pgtest.NewEmpty(t)
	src, err := pgx.Connect(ctx, ours)
	require.NoError(t, err)
	defer src.Close(ctx)
	dst, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer dst.Close(ctx)
	require.NoError(t, refdb.Create(ctx, dst, level))

	benchCols := []string{"id", "workflow_run_id", "config_id", "benchmark_type", "date", "isl", "osl", "conc", "image",
		"metrics", "offload_mode", "trace_replay_id", "server_log_id"}
	benchQuery := `SELECT id, workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, image, metrics, offload_mode,
		trace_replay_id, server_log_id`
	// A blob of ours as the reference keeps it: its gzip bytes.
	blob := func(col string) string {
		return `(SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM trace_blob_chunks c WHERE c.digest = t.` + col + `)`
	}
	logCols, logQuery := []string{"id", "server_log"}, `SELECT s.id, x.content`
	if level != refdb.Level010 {
		logCols, logQuery = append(logCols, "file_name"), logQuery+`, s.primary_file`
	}
	if level != refdb.Level010 {
		benchCols = append(benchCols, "recipe_fingerprint")
		benchQuery += `, recipe_fingerprint`
	}
	copies := []referenceCopy{
		{table: "configs", cols: []string{"id", "hardware", "framework", "model", "precision", "spec_method", "disagg",
			"is_multinode", "prefill_tp", "prefill_ep", "prefill_dp_attention", "prefill_num_workers", "decode_tp",
			"decode_ep", "decode_dp_attention", "decode_num_workers", "num_prefill_gpu", "num_decode_gpu"},
			query: `SELECT id, hardware, framework, model, precision, spec_method, disagg, is_multinode, prefill_tp,
				prefill_ep, prefill_dp_attention, prefill_num_workers, decode_tp, decode_ep, decode_dp_attention,
				decode_num_workers, num_prefill_gpu, num_decode_gpu FROM configs`},
		{table: "workflow_runs", cols: []string{"id", "github_run_id", "run_attempt", "name", "status", "conclusion",
			"head_sha", "head_branch", "html_url", "created_at", "run_started_at", "date"},
			query: `SELECT id, github_run_id, run_attempt, name, status, conclusion, head_sha, head_branch, html_url,
				created_at, run_started_at, date FROM workflow_runs`},
		// The primary log file's text; the others from 013 on.
		{table: "server_logs", cols: logCols, query: logQuery + ` FROM server_logs s
			JOIN server_log_files f ON f.server_log_id = s.id AND f.file_name = s.primary_file
			JOIN server_log_texts x ON x.digest = f.text_digest`},
		// The files inline, the CSV raw.
		{table: "agentic_trace_replay", cols: []string{"id", "profile_export_jsonl_gz", "profile_export_uncompressed_size",
			"server_metrics_json_gz", "server_metrics_json_uncompressed_size", "server_metrics_csv", "server_metrics_csv_size"},
			query: `SELECT t.id, ` + blob("profile_export_digest") + `, t.profile_export_size, ` + blob("server_metrics_json_digest") +
				`, t.server_metrics_json_size, ` + blob("server_metrics_csv_digest") + `, t.server_metrics_csv_size FROM agentic_trace_replay t`,
			adjust: func(v []any) { v[5] = gunzipped(t, v[5]) }},
		// Numbers only in metrics; an AgentX row holds the producer's
		// server metrics under their own names (ours keeps them as
		// published_<key> beside the values it derives).
		{table: "benchmark_results", cols: benchCols, query: benchQuery + ` FROM benchmark_results`,
			adjust: func(v []any) { v[9] = referenceMetrics(v[9].(map[string]any)) }},
		{table: "eval_results", cols: []string{"id", "workflow_run_id", "config_id", "task", "date", "isl", "osl", "conc",
			"lm_eval_version", "metrics"},
			query: `SELECT id, workflow_run_id, config_id, task, date, isl, osl, conc, lm_eval_version, metrics FROM eval_results`},
		// One sample per document, the last line of the file; the filter
		// is in data.
		{table: "eval_samples", cols: []string{"eval_result_id", "doc_id", "target", "response", "passed", "score", "data"},
			query: `SELECT DISTINCT ON (eval_result_id, doc_id) eval_result_id, doc_id, target, response, passed,
				score::numeric, jsonb_build_object('filter', filter)
				FROM eval_samples ORDER BY eval_result_id, doc_id, source_line DESC`},
		// One row per refs: the last entry survived the upsert.
		{table: "changelog_entries", cols: []string{"workflow_run_id", "date", "base_ref", "head_ref", "config_keys",
			"description", "pr_link"},
			query: `SELECT DISTINCT ON (workflow_run_id, base_ref, head_ref) workflow_run_id, date, base_ref, head_ref,
				config_keys, description, pr_link FROM changelog_entries
				ORDER BY workflow_run_id, base_ref, head_ref, entry_index DESC`},
		// One row per GPU: the last cluster written.
		{table: "run_stats", cols: []string{"workflow_run_id", "date", "hardware", "n_success", "total"},
			query: `SELECT DISTINCT ON (workflow_run_id, hardware) workflow_run_id, date, hardware, n_success, total
				FROM run_stats ORDER BY workflow_run_id, hardware, id DESC`},
	}
	if level != refdb.Level010 {
		copies = append(copies, referenceCopy{table: "server_log_files", cols: []string{"server_log_id", "file_name", "log_text"},
			query: `SELECT f.server_log_id, f.file_name, x.content FROM server_log_files f
				JOIN server_logs s ON s.id = f.server_log_id JOIN server_log_texts x ON x.digest = f.text_digest
				WHERE f.file_name <> s.primary_file`})
	}
	for _, c := range copies {
		rows, err := src.Query(ctx, c.query)
		require.NoError(t, err, c.table)
		var all [][]any
		for rows.Next() {
			v, err := rows.Values()
			require.NoError(t, err, c.table)
			if c.adjust != nil {
				c.adjust(v)
			}
			all = append(all, v)
		}
		require.NoError(t, rows.Err(), c.table)
		_, err = dst.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(all))
		require.NoError(t, err, c.table)
	}
	return ref
}

// referenceMetrics is a metrics object of ours as the reference's mapper
// writes it.
func referenceMetrics(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if _, number := v.(float64); !number || k == trace.ServerMetricsMarker {
			continue
		}
		out[k] = v
	}
	if _, ours := m[trace.ServerMetricsMarker]; ours {
		// The keys we derive, with no value of the producer's behind them.
		for _, k := range trace.ServerMetricKeys {
			delete(out, k)
		}
	}
	for k, v := range m {
		if owned, ok := strings.CutPrefix(k, trace.PublishedPrefix); ok {
			out[owned] = v
			delete(out, k)
		}
	}
	return out
}

// gunzipped is a gzip blob's bytes, nil for none.
func gunzipped(t *testing.T, v any) any {
	gz, ok := v.([]byte)
	if !ok || gz == nil {
		return nil
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}
