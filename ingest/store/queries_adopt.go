package store

// Adopt: the reference ingest's schema converted into ours (adopt.go).
// Inside the adopt's one transaction the search_path is the scratch
// schema (adoptSchema) alone: unqualified names are our new tables, and
// the reference's are always named public.x.

const (
	adoptSchema   = "ingest_adopt"
	archiveSchema = "reference_archive"
)

// qAdoptFiles lists the reference's applied migration files.
const qAdoptFiles = `SELECT filename::text FROM public.schema_migrations ORDER BY filename`

// qAdoptColumns lists the columns of the reference's tables in public.
const qAdoptColumns = `
SELECT c.relname::text, a.attname::text
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum`

// qAdoptTableSizes counts the rows and bytes (table, TOAST and indexes)
// of every table in public.
const qAdoptTableSizes = `
SELECT c.relname::text, pg_total_relation_size(c.oid)
FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY c.relname`

// qAdoptSchemasPresent says which of the schemas adopt creates exist.
const qAdoptSchemasPresent = `
SELECT coalesce(array_agg(nspname::text ORDER BY nspname), '{}')
FROM pg_namespace WHERE nspname IN ('dashboard', 'reference_archive', 'ingest_adopt')`

// qAdoptForeignKeysIn lists foreign keys from a table adopt leaves in
// public (site-owned) into one it moves aside: moving would break them.
const qAdoptForeignKeysIn = `
SELECT format('%s.%s -> %s', c.conrelid::regclass, c.conname, c.confrelid::regclass)
FROM pg_constraint c
JOIN pg_class f ON f.oid = c.conrelid
JOIN pg_class t ON t.oid = c.confrelid
WHERE c.contype = 'f' AND f.relnamespace = 'public'::regnamespace AND t.relnamespace = 'public'::regnamespace
  AND f.relname = ANY($1::text[]) AND NOT t.relname = ANY($1::text[])`

// qAdoptMovable lists what adopt moves from one schema to another: tables,
// views, materialized views, sequences no column owns, and functions —
// everything in the schema except the names kept. Owned sequences,
// indexes, triggers and row types move with their table.
const qAdoptMovable = `
SELECT kind, name FROM (
    SELECT CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'TABLE' WHEN 'v' THEN 'VIEW'
                          WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' END AS kind,
           format('%I.%I', n.nspname, c.relname) AS name, c.relname::text AS bare
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      AND NOT (c.relkind = 'S' AND EXISTS (
          SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
    UNION ALL
    SELECT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END,
           format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)), p.proname::text
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = $1
) o
WHERE NOT bare = ANY($2::text[])
ORDER BY kind, name`

// qAdoptRefusals counts the reference's rows that our checks refuse, one
// count per check; adopt refuses while any is non-zero.
const qAdoptRefusals = `
SELECT 'workflow_runs with a negative run_attempt, attempt 0 beside an attempt 1, or github_run_id < 1',
       (SELECT count(*) FROM public.workflow_runs w WHERE w.run_attempt < 0 OR w.github_run_id < 1
            OR (w.run_attempt = 0 AND EXISTS (SELECT 1 FROM public.workflow_runs o
                WHERE o.github_run_id = w.github_run_id AND o.run_attempt = 1)))
UNION ALL SELECT 'configs with an empty text key or a negative count',
       (SELECT count(*) FROM public.configs WHERE '' IN (hardware, framework, model, precision, spec_method)
            OR least(prefill_tp, prefill_ep, prefill_num_workers, decode_tp, decode_ep, decode_num_workers,
                     num_prefill_gpu, num_decode_gpu) < 0)
UNION ALL SELECT 'benchmark_results of an unknown benchmark_type or offload_mode',
       (SELECT count(*) FROM public.benchmark_results
        WHERE benchmark_type NOT IN ('single_turn', 'agentic_traces') OR offload_mode NOT IN ('on', 'off'))
UNION ALL SELECT 'eval_results with an empty task', (SELECT count(*) FROM public.eval_results WHERE task = '')
UNION ALL SELECT 'run_stats with an empty hardware', (SELECT count(*) FROM public.run_stats WHERE hardware = '')
UNION ALL SELECT 'eval_samples with a negative doc_id', (SELECT count(*) FROM public.eval_samples WHERE doc_id < 0)`

// qAdoptTracesWithoutProfile counts the reference's traces stored without
// a profile export (only server metrics): adopted without one, keeping
// the reference's payloads.
const qAdoptTracesWithoutProfile = `SELECT count(*) FROM public.agentic_trace_replay WHERE profile_export_jsonl_gz IS NULL`

// qAdoptEvalMerges counts the reference's eval rows that share a key with
// a newer one (isl, osl or conc NULL): adopt merges them into it.
const qAdoptEvalMerges = `SELECT coalesce(sum(n - 1), 0) FROM (
    SELECT count(*) AS n FROM public.eval_results GROUP BY workflow_run_id, config_id, task, isl, osl, conc) k`

// qAdoptKVTransferLib counts the rows with a kv_transfer_lib (the branch
// file 008_benchmark_results_kv_transfer_lib.sql), which adopt copies into
// ours (migration 000026).
const qAdoptKVTransferLib = `SELECT count(*) FROM public.benchmark_results WHERE kv_transfer_lib IS NOT NULL`

// Creating the scratch schema: the reference's tables are locked against
// writes (SHARE: the site reads on) for the whole adopt, so that nothing
// written meanwhile is lost.
const (
	qAdoptLockAdvisory = `SELECT pg_advisory_xact_lock(hashtextextended('ingest-adopt', 0))`
	qAdoptCreateSchema = `CREATE SCHEMA ingest_adopt`
	qAdoptSearchPath   = `SET LOCAL search_path = ingest_adopt`
	qAdoptVersion      = `INSERT INTO ingest_schema_migrations (version, dirty) VALUES ($1, false)`
)

// qAdoptBulkForeignKeys lists the foreign keys of the tables adopt fills
// with millions of rows: dropped before the copy and added back after it,
// one validating join each instead of a lookup per row.
const qAdoptBulkForeignKeys = `
SELECT conrelid::regclass::text, conname::text, pg_get_constraintdef(oid)
FROM pg_constraint
WHERE contype = 'f' AND connamespace = 'ingest_adopt'::regnamespace
  AND conrelid IN ('ingest_adopt.eval_samples'::regclass, 'ingest_adopt.benchmark_results'::regclass)
ORDER BY 1, 2`

// Row copies, in foreign-key order. Tokens {x} are replaced by the level's
// column expressions (adoptColumns). Ids are kept; every other table keys
// by them.
const (
	qAdoptConfigs = `
INSERT INTO configs (id, hardware, framework, model, precision, spec_method, disagg, is_multinode,
    prefill_tp, prefill_ep, prefill_dp_attention, prefill_num_workers,
    decode_tp, decode_ep, decode_dp_attention, decode_num_workers, num_prefill_gpu, num_decode_gpu)
SELECT id, hardware, framework, model, precision, spec_method, disagg, is_multinode,
    prefill_tp, prefill_ep, prefill_dp_attention, prefill_num_workers,
    decode_tp, decode_ep, decode_dp_attention, decode_num_workers, num_prefill_gpu, num_decode_gpu
FROM public.configs`

	// A run_attempt of 0 is the reference's "attempt unknown" (its
	// column default, which its GCS backfill leaves when it could not
	// read the run from GitHub): attempt 1, which every run has, unless
	// the run also has an attempt 1 (refused, qAdoptRefusals).
	qAdoptWorkflowRuns = `
INSERT INTO workflow_runs (id, repo, github_run_id, run_attempt, name, name_is_fallback, event, status, conclusion,
    head_sha, head_branch, html_url, created_at, created_at_is_fallback, run_started_at, date, append_only)
SELECT id, $1, github_run_id, greatest(run_attempt, 1), name, name ~ '^CI Run [0-9]+$', NULL, status, conclusion,
    head_sha, head_branch, html_url, created_at, false, run_started_at, date, {wr_append_only}
FROM public.workflow_runs`

	// One ledger row per adopted run attempt, so that the runs already
	// stored are known to a later ingest.
	qAdoptIngests = `
INSERT INTO ingests (repo, github_run_id, run_attempt, workflow_run_id, status, target, started_at, finished_at,
    duration_ms, tool_version)
SELECT repo, github_run_id, run_attempt, id, 'succeeded', 'adopted', now(), now(), 0, $1
FROM workflow_runs ORDER BY id`

	qAdoptServerLogTexts = `
INSERT INTO server_log_texts (digest, size, content)
SELECT DISTINCT ON (digest) digest, size, content FROM (
    SELECT sha256(convert_to(server_log, 'UTF8')) AS digest, octet_length(server_log)::bigint AS size, server_log AS content
    FROM public.server_logs
    {log_texts}
) t
ORDER BY digest
ON CONFLICT (digest) DO NOTHING`

	// adopt_log_files: every file of every reference log, the primary
	// first; the bundle digest is ours (name NUL hex(sha256) NL, by name).
	qAdoptLogFiles = `
CREATE TEMP TABLE adopt_log_files ON COMMIT DROP AS
SELECT id AS old_id, {log_primary} AS file_name, sha256(convert_to(server_log, 'UTF8')) AS text_digest,
       octet_length(server_log)::bigint AS size, true AS is_primary
FROM public.server_logs
{log_files}`

	qAdoptLogBundles = `
CREATE TEMP TABLE adopt_log_map ON COMMIT DROP AS
WITH b AS (
    SELECT old_id,
           sha256(string_agg(convert_to(file_name, 'UTF8') || '\x00'::bytea || convert_to(encode(text_digest, 'hex'), 'UTF8') || '\x0a'::bytea,
                             ''::bytea ORDER BY file_name COLLATE "C")) AS digest,
           min(file_name) FILTER (WHERE is_primary) AS primary_file,
           count(*)::int AS file_count, sum(size)::bigint AS total_size
    FROM adopt_log_files GROUP BY old_id
)
SELECT old_id, digest, primary_file, file_count, total_size,
       min(old_id) OVER (PARTITION BY digest) AS new_id
FROM b`

	qAdoptServerLogs = `
INSERT INTO server_logs (id, digest, primary_file, file_count, total_size, kv_cache_pool_tokens, source_artifact, created_at)
SELECT m.old_id, m.digest, m.primary_file, m.file_count, m.total_size,
       replace((regexp_match(l.server_log, 'GPU KV cache size: ([0-9,]+) tokens'))[1], ',', '')::bigint,
       'adopted', now()
FROM adopt_log_map m JOIN public.server_logs l ON l.id = m.old_id
WHERE m.old_id = m.new_id`

	qAdoptServerLogFiles = `
INSERT INTO server_log_files (server_log_id, file_name, size, text_digest)
SELECT f.old_id, f.file_name, f.size, f.text_digest
FROM adopt_log_files f JOIN adopt_log_map m ON m.old_id = f.old_id
WHERE m.old_id = m.new_id`

	// adopt_trace_map: each reference trace row's id in ours (rows of the
	// same files are one row).
	qAdoptTraceMap = `CREATE TEMP TABLE adopt_trace_map (old_id bigint PRIMARY KEY, new_id bigint NOT NULL) ON COMMIT DROP`

	qAdoptTraceRows = `
SELECT id, profile_export_jsonl_gz IS NOT NULL, server_metrics_json_gz IS NOT NULL, server_metrics_csv IS NOT NULL,
       coalesce(octet_length(profile_export_jsonl_gz), 0), coalesce(octet_length(server_metrics_json_gz), 0),
       coalesce(octet_length(server_metrics_csv), 0), coalesce(server_metrics_json_uncompressed_size, -1)
FROM public.agentic_trace_replay ORDER BY id`

	// qAdoptBlobSlice reads one slice of a reference blob column ($1 is
	// the column, chosen from a fixed list).
	qAdoptBlobSlice = `SELECT substring(%s FROM $2 FOR $3) FROM public.agentic_trace_replay WHERE id = $1`

	// qAdoptBlobDigest: the sha256 of a raw reference blob column, taken
	// in the database ($1 is the column, chosen from a fixed list).
	qAdoptBlobDigest = `SELECT sha256(%s) FROM public.agentic_trace_replay WHERE id = $1`

	qAdoptBlobStoredSize = `UPDATE trace_blobs SET stored_size = $2, chunks = $3 WHERE digest = $1`

	qAdoptBlobInsert = `
INSERT INTO trace_blobs (digest, encoding, size, stored_size, chunks) VALUES ($1, 'gzip', $2, $3, $4)
ON CONFLICT (digest) DO NOTHING`

	// qAdoptBlobChunks copies a gzip column's bytes into our chunks in
	// the database, 1 MiB a chunk, never through the client.
	qAdoptBlobChunks = `
INSERT INTO trace_blob_chunks (digest, seq, data)
SELECT $2, g.seq, substring(t.%[1]s FROM g.seq * $3 + 1 FOR $3)
FROM public.agentic_trace_replay t, generate_series(0, (octet_length(t.%[1]s) - 1) / $3) AS g(seq)
WHERE t.id = $1`

	qAdoptChunkInsert = `INSERT INTO trace_blob_chunks (digest, seq, data) VALUES ($1, $2, $3)`

	qAdoptTraceFind = `SELECT id FROM agentic_trace_replay WHERE digest = $1`

	qAdoptTraceInsert = `
INSERT INTO agentic_trace_replay (id, digest, profile_export_digest, profile_export_size,
    server_metrics_json_digest, server_metrics_json_size, server_metrics_csv_digest, server_metrics_csv_size,
    layout, aggregate_stats, chart_series, request_timeline, derived_metrics, source_artifact, source_dir, created_at)
SELECT id, $2, $3, CASE WHEN $3::bytea IS NOT NULL THEN coalesce(profile_export_uncompressed_size, $4) END,
    $5, coalesce(server_metrics_json_uncompressed_size, $6),
    $7, coalesce(server_metrics_csv_size, $8), 'adopted', '{}'::jsonb, NULL, NULL, '{}'::jsonb, 'adopted', '', created_at
FROM public.agentic_trace_replay WHERE id = $1`

	// qAdoptTraceContext: the framework and disaggregation of the rows a
	// reference trace serves (what its chart series depend on).
	qAdoptTraceContext = `
SELECT c.framework, c.disagg FROM public.benchmark_results r JOIN public.configs c ON c.id = r.config_id
WHERE r.trace_replay_id = $1 ORDER BY r.id`

	// adopt_timeline holds one trace's request timeline in chunks while
	// it is written.
	qAdoptTimelineTable = `CREATE TEMP TABLE adopt_timeline (digest bytea NOT NULL, seq integer NOT NULL, data bytea NOT NULL)
ON COMMIT DROP`
	qAdoptTimelineChunk = `INSERT INTO adopt_timeline (digest, seq, data) VALUES ($1, $2, $3)`
	qAdoptTimelineClear = `DELETE FROM adopt_timeline`

	// qAdoptTracePayloads writes the payloads our trace code computed from
	// the adopted blobs; the timeline ($4 set) from its chunks in
	// adopt_timeline (one trace's at a time).
	qAdoptTracePayloads = `
UPDATE agentic_trace_replay SET aggregate_stats = $2::jsonb, chart_series = $3::jsonb,
    request_timeline = CASE WHEN $4::bool THEN (SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb
        FROM adopt_timeline c) END,
    derived_metrics = $5::jsonb, kv_cache_pool_tokens = $6
WHERE id = $1`

	// qAdoptTraceKeep keeps the reference's payloads of a trace whose
	// profile our code cannot read (NULL aggregate statistics: {}).
	qAdoptTraceKeep = `
UPDATE agentic_trace_replay t SET aggregate_stats = coalesce(r.aggregate_stats, '{}'::jsonb), chart_series = r.chart_series,
    request_timeline = r.request_timeline
FROM public.agentic_trace_replay r WHERE t.id = $1 AND r.id = $1`

	qAdoptTraceMapRow = `INSERT INTO adopt_trace_map (old_id, new_id) VALUES ($1, $2)`

	// adopt_server_metrics holds the owned server-metric keys computed
	// for the reference's AgentX rows until the rows are copied.
	qAdoptServerMetricsTable = `CREATE TEMP TABLE adopt_server_metrics (id bigint PRIMARY KEY, metrics jsonb NOT NULL) ON COMMIT DROP`
	qAdoptServerMetricsRow   = `INSERT INTO adopt_server_metrics (id, metrics) VALUES ($1, $2::jsonb)`

	// qAdoptAgentXRows lists the reference's AgentX rows ({where}: those a
	// trace serves, or those without one) with what their owned
	// server-metric keys derive from: the config, the numeric metrics
	// among $1 (as qTraceRowLinks reads them on an ingest) and the server
	// log.
	qAdoptAgentXRows = `
SELECT r.id, r.server_log_id, c.framework, c.disagg, c.prefill_tp, c.prefill_dp_attention, c.prefill_num_workers,
    c.decode_tp, c.decode_dp_attention, c.decode_num_workers, x.metrics
FROM public.benchmark_results r
JOIN public.configs c ON c.id = r.config_id
CROSS JOIN LATERAL (
    SELECT coalesce(jsonb_object_agg(m.key, m.value) FILTER (WHERE jsonb_typeof(m.value) = 'number'), '{}'::jsonb) AS metrics
    FROM jsonb_each(CASE WHEN jsonb_typeof(r.metrics) = 'object' THEN r.metrics END) AS m
    WHERE m.key = ANY($1::text[])
) x
WHERE r.benchmark_type = 'agentic_traces' AND {where}
ORDER BY r.id`

	// qAdoptLogFileTexts lists the files of reference server log $1 in
	// name order, the primary first among equals, with their texts.
	qAdoptLogFileTexts = `
SELECT name, text FROM (
    SELECT {log_primary} AS name, server_log AS text FROM public.server_logs WHERE id = $1
    {log_files_of}
) f ORDER BY name COLLATE "C"`

	qAdoptRunStats = `
INSERT INTO run_stats (id, workflow_run_id, date, cluster, hardware, n_success, total, source_artifact, source_file, ingest_id)
SELECT r.id, r.workflow_run_id, r.date, r.hardware, r.hardware, r.n_success, r.total, 'adopted', '', i.id
FROM public.run_stats r JOIN ingests i ON i.workflow_run_id = r.workflow_run_id`

	// adopt_eval_map: each reference eval row's id in ours. The
	// reference's key is a plain UNIQUE, so rows whose isl, osl or conc is
	// NULL never conflicted and a re-ingest of the run added another row;
	// ours (NULLS NOT DISTINCT) holds one. The newest row of a key (the
	// highest id: the reference's last write of it) stands for the key.
	qAdoptEvalMap = `
CREATE TEMP TABLE adopt_eval_map ON COMMIT DROP AS
SELECT id AS old_id, max(id) OVER w AS new_id, count(*) OVER w > 1 AS merged
FROM public.eval_results
WINDOW w AS (PARTITION BY workflow_run_id, config_id, task, isl, osl, conc)`

	qAdoptEvalResults = `
INSERT INTO eval_results (id, workflow_run_id, config_id, task, date, isl, osl, conc, lm_eval_version, metrics,
    content_digest, source_artifact, source_artifact_id, source_file, source_row, ingest_id)
SELECT r.id, r.workflow_run_id, r.config_id, r.task, r.date, r.isl, r.osl, r.conc, r.lm_eval_version, r.metrics,
    substring(sha256(convert_to(jsonb_build_array(r.workflow_run_id, r.config_id, r.task, r.isl, r.osl, r.conc,
        r.date, r.lm_eval_version, r.metrics)::text, 'UTF8')) FROM 1 FOR 16),
    'adopted', NULL, '', 0, i.id
FROM public.eval_results r
JOIN adopt_eval_map m ON m.old_id = r.id AND m.new_id = r.id
JOIN ingests i ON i.workflow_run_id = r.workflow_run_id`

	// Sample texts: each once, keyed by sha256(kind NUL content); a text
	// met again is skipped by the conflict (no sort of millions of texts).
	qAdoptSampleTexts = `
INSERT INTO eval_sample_texts (digest, kind, content)
SELECT sha256(convert_to(k.kind, 'UTF8') || '\x00'::bytea || convert_to(k.content, 'UTF8')), k.kind, k.content
FROM public.eval_samples s,
     LATERAL (VALUES ('prompt', s.prompt), ('doc', (s.data -> 'doc')::text), ('resps', (s.data -> 'resps')::text)) AS k(kind, content)
WHERE k.content IS NOT NULL AND s.eval_result_id >= $1 AND s.eval_result_id < $2
ON CONFLICT (digest) DO NOTHING`

	// The eval map's statistics, for the plans of the batched sample
	// copies that filter it by id.
	qAdoptEvalMapAnalyze = `ANALYZE adopt_eval_map`

	// The adopt transaction's snapshot, exported for the trace readers
	// and imported by each (%s: the id, checked; the command takes no
	// parameter).
	qAdoptExportSnapshot = `SELECT pg_export_snapshot()`
	qAdoptImportSnapshot = `SET TRANSACTION SNAPSHOT '%s'`

	// qAdoptEvalBounds splits the reference's eval rows into $1 ranges of
	// ids, each as many rows: the first id of each range.
	qAdoptEvalBounds = `
SELECT min(id) FROM (SELECT id, ntile($1) OVER (ORDER BY id) AS part FROM public.eval_results) p
GROUP BY part ORDER BY 1`

	// The samples of an eval row nothing merged keep their row; those of
	// merged rows go to the row that stands for the key, each document
	// (doc_id, filter) once, from the newest row holding it.
	qAdoptEvalSamples = `
INSERT INTO eval_samples (id, eval_result_id, doc_id, filter, doc_digest, prompt_digest, target, response, passed, score,
    metrics, resps_digest, filtered_resps, data, source_file, source_line, ingest_id)
SELECT s.id, m.new_id, s.doc_id, coalesce(s.data ->> 'filter', ''),
    CASE WHEN s.data -> 'doc' IS NOT NULL THEN sha256('doc\000'::bytea || convert_to((s.data -> 'doc')::text, 'UTF8')) END,
    CASE WHEN s.prompt IS NOT NULL THEN sha256('prompt\000'::bytea || convert_to(s.prompt, 'UTF8')) END,
    s.target, s.response, s.passed, s.score::double precision, s.metrics,
    CASE WHEN s.data -> 'resps' IS NOT NULL THEN sha256('resps\000'::bytea || convert_to((s.data -> 'resps')::text, 'UTF8')) END,
    NULL, CASE WHEN s.data IS NOT NULL THEN s.data - 'doc' - 'resps' - 'filter' - 'filtered_resps' END,
    '', 0, e.ingest_id
FROM {samples} s
JOIN adopt_eval_map m ON m.old_id = s.eval_result_id
JOIN eval_results e ON e.id = m.new_id
WHERE {merged}`

	// qAdoptMergedSamples: the samples of merged eval rows, each document
	// of a key once, the newest row's first.
	qAdoptMergedSamples = `(
    SELECT DISTINCT ON (m.new_id, s.doc_id, coalesce(s.data ->> 'filter', '')) s.*
    FROM public.eval_samples s JOIN adopt_eval_map m ON m.old_id = s.eval_result_id
    WHERE m.merged AND m.new_id >= $1 AND m.new_id < $2
    ORDER BY m.new_id, s.doc_id, coalesce(s.data ->> 'filter', ''), s.eval_result_id DESC, s.id DESC)`

	qAdoptChangelog = `
INSERT INTO changelog_entries (id, workflow_run_id, merge_run_id, merge_run_attempt, merge_run_url, date, base_ref, head_ref,
    entry_index, config_keys, description, pr_link, append_only, source_artifact, source_file, ingest_id)
SELECT c.id, c.workflow_run_id, w.github_run_id, greatest(w.run_attempt, 1), w.html_url, c.date, c.base_ref, c.head_ref,
    0, c.config_keys, c.description, c.pr_link, {cl_append_only}, 'adopted', '', i.id
FROM public.changelog_entries c
JOIN workflow_runs w ON w.id = c.workflow_run_id
JOIN ingests i ON i.workflow_run_id = c.workflow_run_id`

	qAdoptAvailability = `
INSERT INTO availability (model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type, date)
SELECT model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type, date FROM public.availability`

	qAdoptDatasets = `
INSERT INTO datasets (id, slug, label, variant, description, hf_url, license, conversation_count, summary, chart_data,
    dataset_version, ingested_at)
SELECT id, slug, label, variant, description, hf_url, license, conversation_count, summary, chart_data,
    dataset_version, ingested_at
FROM public.datasets`

	qAdoptDatasetConversations = `
INSERT INTO dataset_conversations (id, dataset_id, conv_id, models, num_turns, num_subagent_groups, total_in, total_out,
    total_cached, structure)
SELECT id, dataset_id, conv_id, models, num_turns, num_subagent_groups, total_in, total_out, total_cached, structure
FROM public.dataset_conversations`

	qAdoptRunDatasets = `
INSERT INTO run_datasets (workflow_run_id, dataset_slug, ingest_id, created_at)
SELECT r.workflow_run_id, r.dataset_slug, i.id, r.created_at
FROM public.run_datasets r JOIN ingests i ON i.workflow_run_id = r.workflow_run_id`

	// GPU metrics (level 016 on). A series keeps its id and every column
	// the site reads; ours are filled from them: the format from the
	// vendor (a host of a DCGM bundle, file "…samples.csv#<host>", is
	// dcgm, its hostname the part after #), the content digest from
	// csv_sha256 (the CSV's sha256; another text is hashed with the
	// series' key), the window its span, marked 'adopted' (an ingest of
	// the run keeps the series when its file is the one the reference
	// read: telemetry.StoredSeries.Adopted), no power facts (the
	// reference kept none), no duplicate or dropped samples.
	qAdoptGPUSeries = `
INSERT INTO gpu_metric_series (id, workflow_run_id, artifact_name, config_key, file_name, vendor, format, hostname,
    content_digest, sample_count, gpu_count, started_at, ended_at, sample_interval_s, window_start, window_end,
    window_source, energy_j, avg_power_w, avg_total_power_w, p50_power_w, p90_power_w, duplicate_samples,
    dropped_samples, ingest_id, ingested_at, csv_sha256, sidecars, stats_version)
SELECT s.id, s.workflow_run_id, s.artifact_name, s.config_key, s.file_name, s.vendor,
    CASE WHEN s.file_name ~ '(^|/)samples\.csv#.' THEN 'dcgm' WHEN s.vendor = 'amd' THEN 'amd-smi' ELSE 'nvidia-smi' END,
    CASE WHEN s.file_name ~ '(^|/)samples\.csv#.' THEN substring(s.file_name FROM '#(.*)$') END,
    CASE WHEN s.csv_sha256 ~ '^[0-9a-f]{64}$' THEN decode(s.csv_sha256, 'hex')
        ELSE sha256(convert_to(s.artifact_name || E'\n' || s.file_name || E'\n' || s.csv_sha256, 'UTF8')) END,
    s.sample_count, s.gpu_count, s.started_at, s.ended_at, s.sample_interval_s, s.started_at, s.ended_at, 'adopted',
    NULL, NULL, NULL, NULL, NULL, 0, 0, i.id, s.ingested_at, s.csv_sha256, s.sidecars, {gs_stats_version}
FROM public.gpu_metric_series s JOIN ingests i ON i.workflow_run_id = s.workflow_run_id`

	// qAdoptGPUSamples packs the reference's sample rows into our chunks
	// (8192 samples of one GPU a chunk, in time order); the view
	// gpu_metric_samples gives the rows back. The aggregates take the rows
	// in the order the sorted subquery gives them (one incremental sort
	// within each GPU's rows, already in time order from the primary key)
	// rather than each sorting its array again, a third of the time.
	qAdoptGPUSamples = `
INSERT INTO gpu_metric_sample_chunks (series_id, gpu_index, chunk, sample_count, sampled_at,
    power_w, temperature_c, sm_clock_mhz, mem_clock_mhz, gpu_util_pct, mem_util_pct, edge_temp_c,
    mem_temp_c, gfx_voltage_mv, soc_voltage_mv, mem_voltage_mv, fclk_mhz, socclk_mhz, mm_activity_pct)
SELECT series_id, gpu_index, chunk, count(*), array_agg(sampled_at),
    CASE WHEN count(power_w) > 0 THEN array_agg(power_w) END,
    CASE WHEN count(temperature_c) > 0 THEN array_agg(temperature_c) END,
    CASE WHEN count(sm_clock_mhz) > 0 THEN array_agg(sm_clock_mhz) END,
    CASE WHEN count(mem_clock_mhz) > 0 THEN array_agg(mem_clock_mhz) END,
    CASE WHEN count(gpu_util_pct) > 0 THEN array_agg(gpu_util_pct) END,
    CASE WHEN count(mem_util_pct) > 0 THEN array_agg(mem_util_pct) END,
    CASE WHEN count(edge_temp_c) > 0 THEN array_agg(edge_temp_c) END,
    CASE WHEN count(mem_temp_c) > 0 THEN array_agg(mem_temp_c) END,
    CASE WHEN count(gfx_voltage_mv) > 0 THEN array_agg(gfx_voltage_mv) END,
    CASE WHEN count(soc_voltage_mv) > 0 THEN array_agg(soc_voltage_mv) END,
    CASE WHEN count(mem_voltage_mv) > 0 THEN array_agg(mem_voltage_mv) END,
    CASE WHEN count(fclk_mhz) > 0 THEN array_agg(fclk_mhz) END,
    CASE WHEN count(socclk_mhz) > 0 THEN array_agg(socclk_mhz) END,
    CASE WHEN count(mm_activity_pct) > 0 THEN array_agg(mm_activity_pct) END
FROM (
    SELECT s.*, (row_number() OVER (PARTITION BY series_id, gpu_index ORDER BY sampled_at) - 1) / 8192 AS chunk
    FROM public.gpu_metric_samples s
    ORDER BY series_id, gpu_index, chunk, sampled_at
) s
GROUP BY series_id, gpu_index, chunk`

	qAdoptGPUStats = `
INSERT INTO gpu_metric_gpu_stats (series_id, gpu_index, metric, sample_count, min_value, max_value, mean_value,
    median_value, p95_value, p99_value, stddev_value)
SELECT series_id, gpu_index, metric, sample_count, min_value, max_value, mean_value,
    median_value, p95_value, p99_value, stddev_value
FROM public.gpu_metric_gpu_stats`

	qAdoptGPULinks = `
INSERT INTO benchmark_result_gpu_metrics (benchmark_result_id, series_id)
SELECT benchmark_result_id, series_id FROM public.benchmark_result_gpu_metrics`

	// qAdoptSequences lists our serial columns beside the reference's
	// sequence of the same table, to set ours past both the ids and the
	// reference's last value.
	qAdoptSequences = `
WITH t AS MATERIALIZED (
    SELECT c.relname FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id'
    JOIN pg_class r ON r.relname = c.relname AND r.relnamespace = 'public'::regnamespace AND r.relkind = 'r'
    JOIN pg_attribute ra ON ra.attrelid = r.oid AND ra.attname = 'id'
    WHERE c.relnamespace = 'ingest_adopt'::regnamespace AND c.relkind = 'r'
)
SELECT ours, theirs, format('ingest_adopt.%I', relname) FROM (
    SELECT relname, pg_get_serial_sequence(format('ingest_adopt.%I', relname), 'id') AS ours,
           pg_get_serial_sequence(format('public.%I', relname), 'id') AS theirs
    FROM t OFFSET 0
) s WHERE ours IS NOT NULL AND theirs IS NOT NULL`
)

// qAdoptBenchmarkResults copies the reference's rows with their ids, their
// metrics as an ingest of the run leaves them: the owned server-metric
// keys of an AgentX row replaced by those computed from its trace and logs
// ($1: the keys replaced, adopt_server_metrics), then the trace-derived
// metrics of a linked row written in by the traces stage's own rule
// (derivedMetrics). A later ingest of the run therefore finds every value
// in place. The content digest covers the values stored.
var qAdoptBenchmarkResults = `
INSERT INTO benchmark_results (id, workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, offload_mode,
    recipe_fingerprint, image, metrics, workers, power_invalid_reasons, power_audit, error, content_digest,
    source_artifact, source_artifact_id, source_file, source_row, ingest_id, trace_replay_id, server_log_id, kv_transfer_lib)
SELECT r.id, r.workflow_run_id, r.config_id, r.benchmark_type, r.date, r.isl, r.osl, r.conc, r.offload_mode,
    {br_fingerprint}, r.image, m.metrics, r.workers, {br_reasons}, {br_audit}, r.error,
    substring(sha256(convert_to(jsonb_build_array(r.workflow_run_id, r.config_id, r.benchmark_type, r.isl, r.osl, r.conc,
        r.offload_mode, {br_fingerprint}, r.date, r.image, m.metrics, r.workers, {br_reasons}, {br_audit})::text, 'UTF8')) FROM 1 FOR 16),
    'adopted', NULL, '', 0, i.id, tm.new_id, lm.new_id, {br_kv_transfer_lib}
FROM public.benchmark_results r
JOIN ingests i ON i.workflow_run_id = r.workflow_run_id
LEFT JOIN adopt_trace_map tm ON tm.old_id = r.trace_replay_id
LEFT JOIN adopt_log_map lm ON lm.old_id = r.server_log_id
LEFT JOIN agentic_trace_replay t ON t.id = tm.new_id
LEFT JOIN server_logs l ON l.id = lm.new_id
LEFT JOIN adopt_server_metrics sm ON sm.id = r.id
CROSS JOIN LATERAL (
    SELECT CASE WHEN sm.id IS NULL THEN r.metrics ELSE (r.metrics - $1::text[]) || sm.metrics END AS metrics
) s
CROSS JOIN LATERAL (
    SELECT CASE WHEN r.trace_replay_id IS NULL AND r.server_log_id IS NULL THEN s.metrics
        ELSE ` + derivedMetrics("r", "s.metrics") + ` END AS metrics
) m`
