-- Server log texts cannot be turned back into gzip blobs by SQL: the
-- bundles are removed (re-ingest a run to store them again).
DROP TABLE dataset_conversations;
DROP TABLE datasets;
DROP VIEW dashboard.server_log_files;
DROP VIEW dashboard.server_logs;
UPDATE benchmark_results SET server_log_id = NULL WHERE server_log_id IS NOT NULL;
DELETE FROM server_log_files;
DELETE FROM server_logs;
ALTER TABLE server_log_files DROP COLUMN text_digest;
ALTER TABLE server_log_files ADD COLUMN blob_digest bytea NOT NULL REFERENCES trace_blobs (digest);
DROP TABLE server_log_texts;
