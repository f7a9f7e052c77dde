package store

import "strings"

// SQL of the traces stage (AgentX trace sidecars, server logs, run
// datasets). See migrations/000003_traces.up.sql.

// qTraceRowLinks finds the run's benchmark rows by content digest (the
// winners the benchmark stage ranked while staging), with their current trace and
// server log links.
//
// With them come the row's config and its numeric metrics among $3, what
// the owned server-metric keys of an AgentX row derive from, and whether
// its trace is an adopted one (layout 'adopted', store.Adopt).
var qTraceRowLinks = `
SELECT b.content_digest, b.id, t.digest, l.digest, coalesce(t.layout = 'adopted', false),
	` + configColumnsOf("c") + `,
	x.metrics, x.owned_other
FROM benchmark_results b
-- one pass over the metrics document: the numbers among $3, and whether a key of $4 holds
-- anything else
CROSS JOIN LATERAL (
	SELECT coalesce(jsonb_object_agg(m.key, m.value) FILTER (WHERE m.key = ANY($3::text[]) AND jsonb_typeof(m.value) = 'number'),
			'{}'::jsonb) AS metrics,
		coalesce(bool_or(m.key = ANY($4::text[]) AND jsonb_typeof(m.value) <> 'number'), false) AS owned_other
	FROM jsonb_each(CASE WHEN jsonb_typeof(b.metrics) = 'object' THEN b.metrics END) AS m
	WHERE m.key = ANY($3::text[]) OR m.key = ANY($4::text[])
) x
JOIN configs c ON c.id = b.config_id
LEFT JOIN agentic_trace_replay t ON t.id = b.trace_replay_id
LEFT JOIN server_logs l ON l.id = b.server_log_id
WHERE b.workflow_run_id = $1 AND b.content_digest = ANY($2::bytea[])`

// qKnownTraceDigests reports which of the given digests are stored, and
// which stored sidecars hold payloads of other versions than $4
// (aggregate_stats), $5 (chart_series) and $6 (request_timeline), the
// timeline blob of a build before migration 000015, or, for the sidecars
// of points with per-source series ($8), a chart with series but without
// per-source series (written by a build that never filled them; a null
// chart, none stored, is not one).
const qKnownTraceDigests = `
SELECT 's', digest, NOT (coalesce(aggregate_stats ->> 'version', '') = $4::int::text
		AND (chart_series IS NULL OR chart_series ->> 'version' = $5::int::text)
		AND (request_timeline IS NULL OR request_timeline ->> 'version' = $6::int::text)
		AND request_timeline_digest IS NULL
		AND NOT coalesce(digest = ANY($8::bytea[]) AND chart_series -> 'metricSources' = '[]'::jsonb
			AND (chart_series ->> 'timeslicesCount')::int > 0, false))
FROM agentic_trace_replay WHERE digest = ANY($1::bytea[])
UNION ALL SELECT 'l', digest, false FROM server_logs WHERE digest = ANY($2::bytea[])
UNION ALL SELECT 'b', digest, false FROM trace_blobs WHERE digest = ANY($3::bytea[])
UNION ALL SELECT 't', digest, false FROM server_log_texts WHERE digest = ANY($7::bytea[])`

const qCreateTraceStaging = `
CREATE TEMP TABLE IF NOT EXISTS stage_trace_chunks (
	stream integer NOT NULL,
	seq    integer NOT NULL,
	data   bytea   NOT NULL
) ON COMMIT DROP;
ALTER TABLE stage_trace_chunks ALTER COLUMN data SET STORAGE EXTERNAL`

var traceChunkColumns = []string{"stream", "seq", "data"}

// qInsertTraceBlobs keeps the staged streams named in the arrays as
// content-addressed blobs; a digest already stored is left alone (its
// chunks are not copied again). It returns how many blobs and stored bytes
// are new.
const qInsertTraceBlobs = `
WITH m AS (
	SELECT * FROM unnest($1::int[], $2::bytea[], $3::bigint[], $4::bigint[], $5::int[])
		AS u(stream, digest, size, stored_size, chunks)
), pick AS (
	SELECT DISTINCT ON (digest) * FROM m ORDER BY digest, stream
), ins AS (
	INSERT INTO trace_blobs (digest, encoding, size, stored_size, chunks)
	SELECT digest, 'gzip', size, stored_size, chunks FROM pick
	ON CONFLICT (digest) DO NOTHING
	RETURNING digest, stored_size
), parts AS (
	INSERT INTO trace_blob_chunks (digest, seq, data)
	SELECT i.digest, c.seq, c.data
	FROM ins i JOIN pick p ON p.digest = i.digest JOIN stage_trace_chunks c ON c.stream = p.stream
	RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT coalesce(sum(stored_size), 0) FROM ins), (SELECT count(*) FROM parts)`

// qInsertSidecars stores new sidecars; their JSON payloads are assembled
// from staged streams.
const qInsertSidecars = `
WITH u AS (
	SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bigint[], $4::bytea[], $5::bytea[], $6::bigint[],
		$7::bytea[], $8::bigint[], $9::text[], $10::int[], $11::int[], $12::int[], $13::text[],
		$14::bigint[], $15::text[], $16::text[])
		AS u(digest, profile, profile_size, aiperf, sm_json, sm_json_size, sm_csv, sm_csv_size, layout,
			stats_stream, chart_stream, timeline_stream, derived, kv, source_artifact, source_dir)
), ins AS (
	INSERT INTO agentic_trace_replay (digest, profile_export_digest, profile_export_size, profile_aiperf_digest,
		server_metrics_json_digest, server_metrics_json_size, server_metrics_csv_digest, server_metrics_csv_size,
		layout, aggregate_stats, chart_series, request_timeline, derived_metrics, kv_cache_pool_tokens,
		source_artifact, source_dir)
	SELECT DISTINCT ON (u.digest) u.digest, u.profile, u.profile_size, u.aiperf, u.sm_json, u.sm_json_size,
		u.sm_csv, u.sm_csv_size, u.layout,
		(SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb FROM stage_trace_chunks c WHERE c.stream = u.stats_stream),
		(SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb FROM stage_trace_chunks c WHERE c.stream = u.chart_stream),
		(SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb FROM stage_trace_chunks c WHERE c.stream = u.timeline_stream),
		u.derived::jsonb, u.kv, u.source_artifact, u.source_dir
	FROM u ORDER BY u.digest
	ON CONFLICT (digest) DO NOTHING
	RETURNING 1
)
SELECT count(*) FROM ins`

// qRefreshSidecars replaces the payloads of stored sidecars found stale
// (payloads of another version, or a timeline blob of an older build) with
// the staged ones, and their derived metrics and KV-cache pool. The old
// timeline blob stays in trace_blobs, referenced by nothing.
const qRefreshSidecars = `
UPDATE agentic_trace_replay t SET
	aggregate_stats = (SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb
		FROM stage_trace_chunks c WHERE c.stream = u.stats_stream),
	chart_series = (SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb
		FROM stage_trace_chunks c WHERE c.stream = u.chart_stream),
	request_timeline = (SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')::jsonb
		FROM stage_trace_chunks c WHERE c.stream = u.timeline_stream),
	request_timeline_digest = NULL, request_timeline_size = NULL,
	derived_metrics = u.derived::jsonb, kv_cache_pool_tokens = u.kv
FROM unnest($1::bytea[], $2::int[], $3::int[], $4::int[], $5::text[], $6::bigint[])
	AS u(digest, stats_stream, chart_stream, timeline_stream, derived, kv)
WHERE t.digest = u.digest`

// qLinkTraces points rows at their sidecar; rows already linked to it are
// left alone.
const qLinkTraces = `
UPDATE benchmark_results b SET trace_replay_id = t.id
FROM unnest($1::bigint[], $2::bytea[]) AS u(id, digest)
JOIN agentic_trace_replay t ON t.digest = u.digest
WHERE b.id = u.id AND b.trace_replay_id IS DISTINCT FROM t.id`

// qInsertServerLogs stores new server log bundles, then their files.
const qInsertServerLogs = `
INSERT INTO server_logs (digest, primary_file, file_count, total_size, kv_cache_pool_tokens, source_artifact)
SELECT DISTINCT ON (u.digest) u.digest, u.primary_file, u.file_count, u.total_size, u.kv, u.source_artifact
FROM unnest($1::bytea[], $2::text[], $3::int[], $4::bigint[], $5::bigint[], $6::text[])
	AS u(digest, primary_file, file_count, total_size, kv, source_artifact)
ORDER BY u.digest
ON CONFLICT (digest) DO NOTHING`

// qInsertServerLogTexts stores the staged texts of new log files, each
// once; a digest already stored is left alone. The staged bytes are valid
// UTF-8 without NUL (trace.LogText). It returns how many texts and file
// bytes are new.
const qInsertServerLogTexts = `
WITH pick AS (
	SELECT DISTINCT ON (digest) * FROM unnest($1::int[], $2::bytea[], $3::bigint[]) AS u(stream, digest, size)
	ORDER BY digest, stream
), ins AS (
	INSERT INTO server_log_texts (digest, size, content)
	SELECT p.digest, p.size,
		coalesce((SELECT convert_from(string_agg(c.data, ''::bytea ORDER BY c.seq), 'UTF8')
			FROM stage_trace_chunks c WHERE c.stream = p.stream), '')
	FROM pick p
	ON CONFLICT (digest) DO NOTHING
	RETURNING size
)
SELECT count(*), coalesce(sum(size), 0) FROM ins`

const qInsertServerLogFiles = `
INSERT INTO server_log_files (server_log_id, file_name, text_digest, size)
SELECT l.id, u.name, u.text, u.size
FROM unnest($1::bytea[], $2::text[], $3::bytea[], $4::bigint[]) AS u(log_digest, name, text, size)
JOIN server_logs l ON l.digest = u.log_digest
ON CONFLICT (server_log_id, file_name) DO NOTHING`

// qLinkServerLogs points rows at their server log bundle. A row an adopt
// took over keeps the bundle it was adopted with: at reference levels
// before server_log_files the reference kept one file of a bundle, so the
// run's files make another bundle, and the site would show another log
// for the row.
var qLinkServerLogs = `
UPDATE benchmark_results b SET server_log_id = l.id
FROM unnest($1::bigint[], $2::bytea[]) AS u(id, digest)
JOIN server_logs l ON l.digest = u.digest
WHERE b.id = u.id AND b.server_log_id IS DISTINCT FROM l.id
	AND NOT (b.server_log_id IS NOT NULL AND ` + adoptedRow("b") + `)`

// derivedMetrics is the SQL of a benchmark row's metrics once the
// trace-derived ones are written into them (qApplyDerivedMetrics, and
// store.Adopt for the rows it adopts): row is the row's alias (its
// benchmark_type), metrics the metrics as they stand, t its trace sidecar
// and l its server log bundle (LEFT JOINed). Only derived_* keys are taken
// from the sidecar, so a published metric is never replaced. The KV-cache
// pool (sidecar first, then server log) only goes where the row has none.
//
// A row an adopt took over is not rewritten (qApplyDerivedMetrics,
// qApplyServerMetrics): adopt wrote these keys from what the reference
// kept (store.Adopt), and a rerun of the run keeps an adopted row's values
// as the benchmark stage does (stagingValues). What the reference did not
// keep (a bundle's worker logs before its server_log_files) would
// otherwise change what the site shows on the first ingest after adopt.
//
// On AgentX rows the server-side keys are the ingest's own
// (qApplyServerMetrics): the pool is not filled there, and the sidecar's
// derived cache hit rates, computed from the JSON export, stay in the
// sidecar only (the rows serve server_*_cache_hit_rate).
func derivedMetrics(row, metrics string) string {
	return strings.NewReplacer("{b}", row, "{metrics}", metrics).Replace(`
		CASE WHEN {b}.benchmark_type = 'agentic_traces'
			THEN {metrics} - 'derived_gpu_cache_hit_rate' - 'derived_cpu_cache_hit_rate' ELSE {metrics} END
		|| coalesce((SELECT jsonb_object_agg(d.key, d.value) FROM jsonb_each(t.derived_metrics) AS d
			WHERE starts_with(d.key, 'derived_') AND NOT ({b}.benchmark_type = 'agentic_traces'
				AND d.key IN ('derived_gpu_cache_hit_rate', 'derived_cpu_cache_hit_rate'))), '{}'::jsonb)
		|| CASE WHEN {b}.benchmark_type = 'agentic_traces' OR jsonb_typeof({metrics} -> 'kv_cache_pool_tokens') = 'number'
				OR coalesce(t.kv_cache_pool_tokens, l.kv_cache_pool_tokens) IS NULL THEN '{}'::jsonb
			ELSE jsonb_build_object('kv_cache_pool_tokens', coalesce(t.kv_cache_pool_tokens, l.kv_cache_pool_tokens)) END`)
}

// qApplyDerivedMetrics writes the trace-derived metrics into every linked
// row of the run, next to the published ones (derivedMetrics). It runs on
// every ingest, so values survive a retry's aggregate replacing a linked
// row's metrics; rows already holding them are not touched.
var qApplyDerivedMetrics = `
WITH n AS (
	SELECT b.id,` + derivedMetrics("b", "b.metrics") + `
		AS metrics
	FROM benchmark_results b
	LEFT JOIN agentic_trace_replay t ON t.id = b.trace_replay_id
	LEFT JOIN server_logs l ON l.id = b.server_log_id
	WHERE b.workflow_run_id = $1 AND (b.trace_replay_id IS NOT NULL OR b.server_log_id IS NOT NULL)
		AND NOT ` + adoptedRow("b") + `
)
UPDATE benchmark_results b SET metrics = n.metrics
FROM n WHERE b.id = n.id AND b.metrics IS DISTINCT FROM n.metrics`

// qApplyServerMetrics replaces the owned server-metric keys of AgentX rows
// ($3: every owned key, its published_* copy and the marker) with what the
// traces stage derived ($1 row ids, $2 their keys as JSON objects); rows
// already holding exactly those, and adopted rows (derivedMetrics), are
// not touched.
var qApplyServerMetrics = `
WITH u AS (
	SELECT x.id, (b.metrics - $3::text[]) || x.m AS metrics
	FROM unnest($1::bigint[], $2::jsonb[]) AS x(id, m)
	JOIN benchmark_results b ON b.id = x.id
	WHERE NOT ` + adoptedRow("b") + `
)
UPDATE benchmark_results b SET metrics = u.metrics
FROM u WHERE b.id = u.id AND b.metrics IS DISTINCT FROM u.metrics`

// qUpsertRunDataset records the run's dataset slug.
const qUpsertRunDataset = `
INSERT INTO run_datasets AS d (workflow_run_id, dataset_slug, ingest_id) VALUES ($1, $2, $3)
ON CONFLICT (workflow_run_id) DO UPDATE SET dataset_slug = EXCLUDED.dataset_slug, ingest_id = EXCLUDED.ingest_id
WHERE d.dataset_slug <> EXCLUDED.dataset_slug`

// qInsertDataset writes the catalogue's row of the run's dataset unless a
// row with its id or slug is stored (one a corpus load filled is kept).
const qInsertDataset = `
INSERT INTO datasets (id, slug, label, variant, description, hf_url, license)
VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, NULLIF($7, ''))
ON CONFLICT DO NOTHING`
