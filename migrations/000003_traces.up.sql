-- AgentX traces, server logs and dataset provenance (issue 4).
--
-- Large files (profile_export.jsonl, server metrics exports, server logs)
-- are stored once, content-addressed by the sha256 of their uncompressed
-- bytes, gzip-compressed and split into chunks so neither side ever holds a
-- whole file in memory.

CREATE TABLE trace_blobs (
    digest      bytea       PRIMARY KEY CHECK (length(digest) = 32),
    encoding    text        NOT NULL CHECK (encoding IN ('gzip')),
    size        bigint      NOT NULL CHECK (size >= 0),
    stored_size bigint      NOT NULL CHECK (stored_size >= 0),
    chunks      integer     NOT NULL CHECK (chunks >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE trace_blob_chunks (
    digest bytea   NOT NULL REFERENCES trace_blobs (digest) ON DELETE CASCADE,
    seq    integer NOT NULL CHECK (seq >= 0),
    data   bytea   NOT NULL,
    PRIMARY KEY (digest, seq)
);
-- Chunks are gzip already: store them out of line without compressing again.
ALTER TABLE trace_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- One trace sidecar: the raw files of one AgentX point and what was derived
-- from them. digest is sha256 over the names and digests of its files, so
-- an identical trace is stored once whichever run or artifact carried it.
CREATE TABLE agentic_trace_replay (
    id                         bigserial   PRIMARY KEY,
    digest                     bytea       NOT NULL UNIQUE CHECK (length(digest) = 32),
    profile_export_digest      bytea       NOT NULL REFERENCES trace_blobs (digest),
    profile_export_size        bigint      NOT NULL,
    profile_aiperf_digest      bytea       REFERENCES trace_blobs (digest),
    server_metrics_json_digest bytea       REFERENCES trace_blobs (digest),
    server_metrics_json_size   bigint,
    server_metrics_csv_digest  bytea       REFERENCES trace_blobs (digest),
    server_metrics_csv_size    bigint,
    layout                     text        NOT NULL,
    aggregate_stats            jsonb       NOT NULL,
    chart_series               jsonb       NOT NULL,
    -- one entry per request: large, so a gzip JSON blob like the files
    request_timeline_digest    bytea       NOT NULL REFERENCES trace_blobs (digest),
    request_timeline_size      bigint      NOT NULL,
    -- metrics written back to the linked benchmark rows: "override" keys
    -- replace the aggregate's, "fill" keys are only added where missing.
    derived_metrics            jsonb       NOT NULL DEFAULT '{}',
    kv_cache_pool_tokens       bigint,
    source_artifact            text        NOT NULL,
    source_dir                 text        NOT NULL,
    created_at                 timestamptz NOT NULL DEFAULT now()
);

-- A bundle of server log files, content-addressed by the files as they are
-- in the artifact (a tarball counts as one file).
CREATE TABLE server_logs (
    id                   bigserial   PRIMARY KEY,
    digest               bytea       NOT NULL UNIQUE CHECK (length(digest) = 32),
    primary_file         text        NOT NULL CHECK (primary_file <> ''),
    file_count           integer     NOT NULL CHECK (file_count > 0),
    total_size           bigint      NOT NULL CHECK (total_size >= 0),
    kv_cache_pool_tokens bigint,
    source_artifact      text        NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE server_log_files (
    server_log_id bigint NOT NULL REFERENCES server_logs (id) ON DELETE CASCADE,
    file_name     text   NOT NULL CHECK (file_name <> ''),
    blob_digest   bytea  NOT NULL REFERENCES trace_blobs (digest),
    size          bigint NOT NULL CHECK (size >= 0),
    PRIMARY KEY (server_log_id, file_name)
);

ALTER TABLE benchmark_results
    ADD COLUMN trace_replay_id bigint REFERENCES agentic_trace_replay (id),
    ADD COLUMN server_log_id   bigint REFERENCES server_logs (id);
CREATE INDEX benchmark_results_trace_replay_idx ON benchmark_results (trace_replay_id)
    WHERE trace_replay_id IS NOT NULL;
CREATE INDEX benchmark_results_server_log_idx ON benchmark_results (server_log_id)
    WHERE server_log_id IS NOT NULL;

-- The dataset the run's AgentX points replayed (one per run).
CREATE TABLE run_datasets (
    workflow_run_id bigint      PRIMARY KEY REFERENCES workflow_runs (id) ON DELETE CASCADE,
    dataset_slug    text        NOT NULL CHECK (dataset_slug <> ''),
    ingest_id       bigint      NOT NULL REFERENCES ingests (id),
    created_at      timestamptz NOT NULL DEFAULT now()
);
