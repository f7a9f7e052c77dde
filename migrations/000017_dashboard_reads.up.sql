-- Dashboard reads (issue 24): server logs the site's SQL can read, the
-- dataset tables its /datasets pages read. docs/dashboard-schema.md.

-- Server logs as text. The site reads server_logs.server_log,
-- server_logs.file_name and server_log_files.log_text as PostgreSQL text
-- (whole, or a substring of it); our gzip blobs were unreadable by SQL.
-- Each log file is stored once, keyed by the sha256 of its bytes as they
-- are in the artifact; PostgreSQL compresses the text itself (lz4 where
-- the server has it) and substring() decompresses only the slice it reads.
CREATE TABLE server_log_texts (
    digest     bytea       PRIMARY KEY CHECK (length(digest) = 32),
    -- bytes of the file in the artifact; content drops NUL bytes and
    -- replaces bytes that are not UTF-8 with U+FFFD
    size       bigint      NOT NULL CHECK (size >= 0),
    content    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
DO $$
BEGIN
    ALTER TABLE server_log_texts ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: server log texts keep pglz';
END $$;

-- Bundles stored before this migration hold gzip blobs SQL cannot read and
-- no migration can unpack: they are removed, with their links and the
-- blobs only they used (kv_cache_pool_tokens they gave stays in the rows'
-- metrics). Re-ingesting a run (ingest load --reread) stores its logs as
-- text; docs/operations.md.
UPDATE benchmark_results SET server_log_id = NULL WHERE server_log_id IS NOT NULL;
CREATE TEMP TABLE legacy_log_blobs ON COMMIT DROP AS SELECT DISTINCT blob_digest AS digest FROM server_log_files;
DELETE FROM server_log_files;
DELETE FROM server_logs;
DELETE FROM trace_blobs b USING legacy_log_blobs l
WHERE b.digest = l.digest
  AND NOT EXISTS (SELECT 1 FROM agentic_trace_replay t
                  WHERE b.digest IN (t.profile_export_digest, t.profile_aiperf_digest, t.server_metrics_json_digest,
                                     t.server_metrics_csv_digest, t.request_timeline_digest));

ALTER TABLE server_log_files DROP COLUMN blob_digest;
ALTER TABLE server_log_files ADD COLUMN text_digest bytea NOT NULL REFERENCES server_log_texts (digest);
CREATE INDEX server_log_files_text_idx ON server_log_files (text_digest);

CREATE TRIGGER server_log_texts_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON server_log_texts
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

-- server_logs as the site reads it: the primary file's text and its name.
CREATE VIEW dashboard.server_logs AS
SELECT l.id, t.content AS server_log, l.primary_file AS file_name, true AS files_complete
FROM public.server_logs l
JOIN public.server_log_files f ON f.server_log_id = l.id AND f.file_name = l.primary_file
JOIN public.server_log_texts t ON t.digest = f.text_digest;

-- server_log_files as the site reads it: the bundle's other files.
CREATE VIEW dashboard.server_log_files AS
SELECT f.server_log_id, f.file_name, t.content AS log_text
FROM public.server_log_files f
JOIN public.server_logs l ON l.id = f.server_log_id
JOIN public.server_log_texts t ON t.digest = f.text_digest
WHERE f.file_name <> l.primary_file;

-- The AgentX source datasets (the reference's tables, same columns). The
-- ingest writes the row of a run's catalogued dataset (the catalogue's id,
-- slug, label, variant, Hugging Face URL and license) and never overwrites
-- one; conversations, summary and chart data come from the corpus itself,
-- which this program does not load (docs/dashboard-schema.md).
CREATE TABLE datasets (
    id                 text        PRIMARY KEY,
    slug               text        NOT NULL UNIQUE,
    label              text        NOT NULL,
    variant            text        NOT NULL DEFAULT 'full',
    description        text,
    hf_url             text,
    license            text,
    conversation_count integer     NOT NULL DEFAULT 0,
    summary            jsonb       NOT NULL DEFAULT '{}'::jsonb,
    chart_data         jsonb       NOT NULL DEFAULT '{}'::jsonb,
    dataset_version    integer     NOT NULL DEFAULT 1,
    ingested_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dataset_conversations (
    id                  bigserial PRIMARY KEY,
    dataset_id          text      NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    conv_id             text      NOT NULL,
    models              text[]    NOT NULL DEFAULT '{}',
    num_turns           integer   NOT NULL DEFAULT 0,
    num_subagent_groups integer   NOT NULL DEFAULT 0,
    total_in            bigint    NOT NULL DEFAULT 0,
    total_out           bigint    NOT NULL DEFAULT 0,
    total_cached        bigint    NOT NULL DEFAULT 0,
    structure           jsonb     NOT NULL,
    UNIQUE (dataset_id, conv_id)
);
CREATE INDEX dataset_conversations_dataset_idx ON dataset_conversations (dataset_id);

CREATE TRIGGER datasets_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON datasets
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();
CREATE TRIGGER dataset_conversations_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dataset_conversations
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();
