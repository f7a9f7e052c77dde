-- Back to the view of migration 000007. The columns stay nullable: rows
-- written since hold no timeline blob and may hold no chart series.
DROP VIEW dashboard.agentic_trace_replay;
CREATE VIEW dashboard.agentic_trace_replay AS
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
       (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM public.trace_blob_chunks c
        WHERE c.digest = t.request_timeline_digest) AS request_timeline_gz,
       t.created_at
FROM public.agentic_trace_replay t;
ALTER TABLE agentic_trace_replay DROP COLUMN request_timeline;
