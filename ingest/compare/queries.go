package compare

import (
	"strings"

	"github.com/inferencex/ingest/schema"
)

// The compare's reads, one per table, each for both schemas where they
// differ. $1 is the GitHub run id, $2 the attempt. Column lists are
// explicit: the two schemas order columns differently.

// qDetect tells the schemas apart by their own objects: ours has the
// ingests ledger (whatever our migration bookkeeping is named); the
// reference's schema_migrations has a filename column. It also gives the
// reference's level, its newest filename.
const qDetect = `SELECT to_regclass('public.ingests') IS NOT NULL,
	EXISTS (SELECT 1 FROM information_schema.columns
	        WHERE table_schema = 'public' AND table_name = 'schema_migrations' AND column_name = 'filename')`

const qSearchPath = `SET LOCAL search_path = public`

const qReferenceLevel = `SELECT coalesce(max(filename), '') FROM schema_migrations`

const qRun = `SELECT id, head_sha, html_url, conclusion FROM workflow_runs WHERE github_run_id = $1 AND run_attempt = $2`

// configColumns is the configs natural key, as columns of c.
var configColumns = "c." + strings.Join(schema.ConfigKeyColumns(), ", c.")

// $1 is workflow_runs.id here and below.
var qBenchmarks = `SELECT ` + configColumns + `, b.benchmark_type, b.isl, b.osl, b.conc, b.offload_mode, b.image, b.metrics
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.workflow_run_id = $1`

var qEvals = `SELECT e.id, ` + configColumns + `, e.task, e.isl, e.osl, e.conc, e.lm_eval_version, e.metrics
	FROM eval_results e JOIN configs c ON c.id = e.config_id WHERE e.workflow_run_id = $1`

// Ours keeps the filter in a column; the reference in data.
const qSamplesOurs = `SELECT s.eval_result_id, s.doc_id, s.filter, s.target, s.response, s.score, s.passed
	FROM eval_samples s JOIN eval_results e ON e.id = s.eval_result_id WHERE e.workflow_run_id = $1`

const qSamplesReference = `SELECT s.eval_result_id, s.doc_id, coalesce(s.data->>'filter', ''), s.target, s.response,
	s.score::float8, s.passed
	FROM eval_samples s JOIN eval_results e ON e.id = s.eval_result_id WHERE e.workflow_run_id = $1`

// The reference has no entry_index (one row per refs): -1 stands for it.
const qChangelogOurs = `SELECT base_ref, head_ref, entry_index, description, config_keys, pr_link
	FROM changelog_entries WHERE workflow_run_id = $1`

const qChangelogReference = `SELECT base_ref, head_ref, -1, description, config_keys, pr_link
	FROM changelog_entries WHERE workflow_run_id = $1`

// The reference keys run stats by GPU only: its hardware is the cluster.
const qRunStatsOurs = `SELECT cluster, hardware, n_success, total FROM run_stats WHERE workflow_run_id = $1`

const qRunStatsReference = `SELECT hardware, hardware, n_success, total FROM run_stats WHERE workflow_run_id = $1`

var benchKeyColumns = configColumns + `, b.benchmark_type, b.isl, b.osl, b.conc, b.offload_mode`

// Traces: the trace each row links to. Ours holds digests of the
// uncompressed files; the reference the files themselves (the profile and
// server-metrics JSON gzipped, the CSV raw), hashed by the compare.
var qTracesOurs = `SELECT ` + benchKeyColumns + `, t.profile_export_digest, t.profile_export_size,
	t.server_metrics_json_digest, t.server_metrics_json_size, t.server_metrics_csv_digest, t.server_metrics_csv_size,
	t.profile_aiperf_digest, t.layout
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN agentic_trace_replay t ON t.id = b.trace_replay_id
	WHERE b.workflow_run_id = $1`

var qTracesReference = `SELECT ` + benchKeyColumns + `, t.profile_export_jsonl_gz, t.profile_export_uncompressed_size,
	t.server_metrics_json_gz, t.server_metrics_json_uncompressed_size, sha256(t.server_metrics_csv), t.server_metrics_csv_size
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN agentic_trace_replay t ON t.id = b.trace_replay_id
	WHERE b.workflow_run_id = $1`

// Server logs: each file of the log a row links to, its text as stored
// hashed (UTF-8 bytes) and measured on the server.
var qLogsOurs = `SELECT ` + benchKeyColumns + `, f.file_name, f.file_name = s.primary_file,
	sha256(convert_to(x.content, 'UTF8')), octet_length(x.content)
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN server_logs s ON s.id = b.server_log_id
	JOIN server_log_files f ON f.server_log_id = s.id JOIN server_log_texts x ON x.digest = f.text_digest
	WHERE b.workflow_run_id = $1`

// Before 013 the reference keeps the primary file's text alone, unnamed
// (its name is then taken from ours).
var qLogsReference010 = `SELECT ` + benchKeyColumns + `, '', true,
	sha256(convert_to(s.server_log, 'UTF8')), octet_length(s.server_log)
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN server_logs s ON s.id = b.server_log_id
	WHERE b.workflow_run_id = $1`

var qLogsReference = `SELECT ` + benchKeyColumns + `, s.file_name, true,
	sha256(convert_to(s.server_log, 'UTF8')), octet_length(s.server_log)
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN server_logs s ON s.id = b.server_log_id
	WHERE b.workflow_run_id = $1
	UNION ALL
	SELECT ` + benchKeyColumns + `, f.file_name, false, sha256(convert_to(f.log_text, 'UTF8')), octet_length(f.log_text)
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN server_log_files f ON f.server_log_id = b.server_log_id
	WHERE b.workflow_run_id = $1`
