package compare

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

const qReferenceLevel = `SELECT coalesce(max(filename), '') FROM schema_migrations`

const qRun = `SELECT id, head_sha, html_url, conclusion FROM workflow_runs WHERE github_run_id = $1 AND run_attempt = $2`

const configColumns = `c.hardware, c.framework, c.model, c.precision, c.spec_method, c.disagg, c.is_multinode,
	c.prefill_tp, c.prefill_ep, c.prefill_dp_attention, c.prefill_num_workers,
	c.decode_tp, c.decode_ep, c.decode_dp_attention, c.decode_num_workers, c.num_prefill_gpu, c.num_decode_gpu`

// $1 is workflow_runs.id here and below.
const qBenchmarks = `SELECT ` + configColumns + `, b.benchmark_type, b.isl, b.osl, b.conc, b.offload_mode, b.image, b.metrics
	FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.workflow_run_id = $1`

const qEvals = `SELECT e.id, ` + configColumns + `, e.task, e.isl, e.osl, e.conc, e.lm_eval_version, e.metrics
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
