-- AgentX payloads in the dashboard's current shapes (issue 24).
--
-- The dashboard reads agentic_trace_replay.aggregate_stats, chart_series
-- and request_timeline only at exactly its own payload versions
-- (aggregate_stats 7, chart_series 12, request_timeline 5) and recomputes
-- any other from the raw blobs on every read. The ingest now computes and
-- stores those versions; request_timeline becomes a jsonb column like the
-- reference's (older builds kept it as a gzip blob, request_timeline_digest).
--
-- Rows written by older builds keep their version-1 payloads and their
-- timeline blob: the next ingest of a run that carries the trace finds the
-- stored payloads stale and recomputes them in place (docs/schema.md).

ALTER TABLE agentic_trace_replay
    ADD COLUMN request_timeline jsonb,
    -- null without a server metrics export, as the reference stores it
    ALTER COLUMN chart_series DROP NOT NULL,
    -- older builds only: the gzip timeline blob
    ALTER COLUMN request_timeline_digest DROP NOT NULL,
    ALTER COLUMN request_timeline_size DROP NOT NULL;

-- The view the dashboard reads. It is not updatable (WITH at the top level
-- rules out an automatically updatable view, and there are no rules or
-- triggers): the dashboard's write-back of a recomputed payload fails and
-- is skipped by the dashboard itself, for any role. The CTE is inlined by
-- the planner, so a read by id still uses the table's primary key.
DROP VIEW dashboard.agentic_trace_replay;
CREATE VIEW dashboard.agentic_trace_replay AS
WITH t AS (SELECT * FROM public.agentic_trace_replay)
SELECT t.id,
       (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM public.trace_blob_chunks c
        WHERE c.digest = t.profile_export_digest) AS profile_export_jsonl_gz,
       t.profile_export_size AS profile_export_uncompressed_size,
       (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM public.trace_blob_chunks c
        WHERE c.digest = t.server_metrics_json_digest) AS server_metrics_json_gz,
       t.server_metrics_json_size AS server_metrics_json_uncompressed_size,
       t.server_metrics_csv_size,
       t.aggregate_stats,
       t.chart_series,
       t.request_timeline,
       t.created_at
FROM t;
