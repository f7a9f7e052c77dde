-- Compatibility views for the InferenceX dashboard (docs/dashboard-schema.md).
--
-- The dashboard's query layer reads the reference ingest's tables. Most of
-- ours have the reference's columns (plus provenance columns it ignores);
-- where ours store data differently, a view in schema "dashboard" has the
-- reference's table name, columns and shapes. A site switches by setting
-- its connection's search_path to "dashboard,public": the views shadow the
-- tables that differ, every other name resolves to public.

CREATE SCHEMA dashboard;

-- eval_samples: one row per (eval_result_id, doc_id) as in the reference
-- (ours keeps every (document, filter) line: the strict-match line is the
-- one shown, else the first filter by name), the prompt text inline
-- (ours stores it once in eval_sample_texts), and data holding what the
-- reference's data column holds: doc, resps, filter, filtered_resps and
-- the line's other fields (arguments, doc_hash, …).
CREATE VIEW dashboard.eval_samples AS
SELECT DISTINCT ON (s.eval_result_id, s.doc_id)
       s.id,
       s.eval_result_id,
       s.doc_id,
       p.content AS prompt,
       s.target,
       s.response,
       s.passed,
       s.score::numeric AS score,
       s.metrics,
       COALESCE(s.data, '{}'::jsonb) || jsonb_strip_nulls(jsonb_build_object(
           'doc', d.content::jsonb,
           'resps', r.content::jsonb,
           'filter', NULLIF(s.filter, ''),
           'filtered_resps', s.filtered_resps)) AS data
FROM public.eval_samples s
LEFT JOIN public.eval_sample_texts p ON p.digest = s.prompt_digest
LEFT JOIN public.eval_sample_texts d ON d.digest = s.doc_digest
LEFT JOIN public.eval_sample_texts r ON r.digest = s.resps_digest
ORDER BY s.eval_result_id, s.doc_id, (s.filter = 'strict-match') DESC, s.filter;

-- run_stats: the reference keeps one row per (run, GPU); ours one per
-- cluster (b200-dgxc, b200-nb, …), summed here per GPU.
CREATE VIEW dashboard.run_stats AS
SELECT min(id) AS id, workflow_run_id, date, hardware,
       sum(n_success)::integer AS n_success, sum(total)::integer AS total
FROM public.run_stats
GROUP BY workflow_run_id, date, hardware;

-- agentic_trace_replay: the reference's gzip columns are our gzip blobs
-- (content-addressed, chunked): their chunks concatenated are the same
-- gzip stream. request_timeline is a gzip blob here too (jsonb in the
-- reference): it is exposed as request_timeline_gz, see the schema guide.
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
