DROP TABLE IF EXISTS run_datasets;
DROP INDEX IF EXISTS benchmark_results_server_log_idx;
DROP INDEX IF EXISTS benchmark_results_trace_replay_idx;
ALTER TABLE benchmark_results DROP COLUMN IF EXISTS server_log_id, DROP COLUMN IF EXISTS trace_replay_id;
DROP TABLE IF EXISTS server_log_files;
DROP TABLE IF EXISTS server_logs;
DROP TABLE IF EXISTS agentic_trace_replay;
DROP TABLE IF EXISTS trace_blob_chunks;
DROP TABLE IF EXISTS trace_blobs;
