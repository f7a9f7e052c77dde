-- Foundation: workflow runs, configs, benchmark results, availability,
-- run stats and the ingest ledger.

CREATE TABLE workflow_runs (
    id                     bigserial PRIMARY KEY,
    repo                   text        NOT NULL,
    github_run_id          bigint      NOT NULL CHECK (github_run_id > 0),
    run_attempt            smallint    NOT NULL CHECK (run_attempt >= 1),
    name                   text        NOT NULL,
    name_is_fallback       boolean     NOT NULL DEFAULT false,
    event                  text,
    status                 text,
    conclusion             text,
    head_sha               text,
    head_branch            text,
    html_url               text,
    created_at             timestamptz NOT NULL,
    created_at_is_fallback boolean     NOT NULL DEFAULT false,
    run_started_at         timestamptz,
    date                   date        NOT NULL,
    append_only            boolean     NOT NULL DEFAULT false,
    CONSTRAINT workflow_runs_natural_key UNIQUE (github_run_id, run_attempt)
);

CREATE VIEW latest_workflow_runs AS
SELECT DISTINCT ON (github_run_id) *
FROM workflow_runs
ORDER BY github_run_id, run_attempt DESC;

CREATE TABLE configs (
    id                   serial PRIMARY KEY,
    hardware             text     NOT NULL CHECK (hardware = lower(hardware) AND hardware <> ''),
    framework            text     NOT NULL CHECK (framework = lower(framework) AND framework <> ''),
    model                text     NOT NULL CHECK (model = lower(model) AND model <> ''),
    precision            text     NOT NULL CHECK (precision = lower(precision) AND precision <> ''),
    spec_method          text     NOT NULL CHECK (spec_method = lower(spec_method) AND spec_method <> ''),
    disagg               boolean  NOT NULL DEFAULT false,
    is_multinode         boolean  NOT NULL DEFAULT false,
    prefill_tp           smallint NOT NULL CHECK (prefill_tp >= 0),
    prefill_ep           smallint NOT NULL DEFAULT 1 CHECK (prefill_ep >= 0),
    prefill_dp_attention boolean  NOT NULL DEFAULT false,
    prefill_num_workers  smallint NOT NULL DEFAULT 0 CHECK (prefill_num_workers >= 0),
    decode_tp            smallint NOT NULL CHECK (decode_tp >= 0),
    decode_ep            smallint NOT NULL DEFAULT 1 CHECK (decode_ep >= 0),
    decode_dp_attention  boolean  NOT NULL DEFAULT false,
    decode_num_workers   smallint NOT NULL DEFAULT 0 CHECK (decode_num_workers >= 0),
    num_prefill_gpu      smallint NOT NULL CHECK (num_prefill_gpu >= 0),
    num_decode_gpu       smallint NOT NULL CHECK (num_decode_gpu >= 0),
    CONSTRAINT configs_natural_key UNIQUE (
        hardware, framework, model, precision, spec_method, disagg, is_multinode,
        prefill_tp, prefill_ep, prefill_dp_attention, prefill_num_workers,
        decode_tp, decode_ep, decode_dp_attention, decode_num_workers,
        num_prefill_gpu, num_decode_gpu)
);
CREATE INDEX configs_model_hardware_idx ON configs (model, hardware);

-- One row per ingest attempt. Rows of a committed ingest reference it; an
-- aborted ingest leaves only its ledger row.
CREATE TABLE ingests (
    id                bigserial PRIMARY KEY,
    repo              text        NOT NULL,
    github_run_id     bigint      NOT NULL,
    run_attempt       integer     NOT NULL,
    merge_run_id      bigint,
    merge_run_attempt integer,
    workflow_run_id   bigint      REFERENCES workflow_runs (id),
    status            text        NOT NULL
        CHECK (status IN ('running', 'succeeded', 'completed_with_failures', 'aborted')),
    target            text        NOT NULL,
    started_at        timestamptz NOT NULL,
    finished_at       timestamptz,
    duration_ms       bigint,
    error             text,
    summary           jsonb,
    artifacts         jsonb       NOT NULL DEFAULT '[]'::jsonb,
    tool_version      text        NOT NULL DEFAULT ''
);
CREATE INDEX ingests_run_idx ON ingests (github_run_id, run_attempt, id DESC);

CREATE TABLE benchmark_results (
    id                    bigserial PRIMARY KEY,
    workflow_run_id       bigint  NOT NULL REFERENCES workflow_runs (id),
    config_id             integer NOT NULL REFERENCES configs (id),
    benchmark_type        text    NOT NULL CHECK (benchmark_type IN ('single_turn', 'agentic_traces')),
    date                  date    NOT NULL,
    isl                   integer CHECK (isl IS NULL OR isl > 0),
    osl                   integer CHECK (osl IS NULL OR osl > 0),
    conc                  integer NOT NULL CHECK (conc > 0),
    offload_mode          text    NOT NULL DEFAULT 'off' CHECK (offload_mode IN ('on', 'off')),
    recipe_fingerprint    text    CHECK (recipe_fingerprint IS NULL OR recipe_fingerprint <> ''),
    image                 text,
    metrics               jsonb   NOT NULL,
    workers               jsonb,
    power_invalid_reasons jsonb,
    power_audit           jsonb,
    error                 text,
    -- sha256 (first 16 bytes) of the point key and every stored value: a
    -- rerun compares digests instead of sending unchanged rows again.
    content_digest        bytea   NOT NULL,
    -- provenance: the artifact, file and row this point was read from, and
    -- the ingest that wrote it.
    source_artifact       text    NOT NULL,
    source_artifact_id    bigint,
    source_file           text    NOT NULL,
    source_row            integer NOT NULL,
    ingest_id             bigint  NOT NULL REFERENCES ingests (id),
    CONSTRAINT benchmark_results_natural_key UNIQUE NULLS NOT DISTINCT (
        workflow_run_id, config_id, benchmark_type, isl, osl, conc, offload_mode, recipe_fingerprint)
);
-- Lookups by run use the natural key, whose first column is workflow_run_id.
CREATE INDEX benchmark_results_config_ts_idx ON benchmark_results (config_id, conc, isl, osl, date DESC)
    WHERE error IS NULL;

CREATE TABLE availability (
    model          text    NOT NULL,
    isl            integer,
    osl            integer,
    precision      text    NOT NULL,
    hardware       text    NOT NULL,
    framework      text    NOT NULL,
    spec_method    text    NOT NULL,
    disagg         boolean NOT NULL DEFAULT false,
    benchmark_type text    NOT NULL DEFAULT 'single_turn',
    date           date    NOT NULL,
    CONSTRAINT availability_natural_key UNIQUE NULLS NOT DISTINCT (
        model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type, date)
);

-- run_stats keys are cluster names (b200-dgxc, b300-nv, …); hardware is the
-- GPU key the cluster resolves to.
CREATE TABLE run_stats (
    id              bigserial PRIMARY KEY,
    workflow_run_id bigint  NOT NULL REFERENCES workflow_runs (id),
    date            date    NOT NULL,
    cluster         text    NOT NULL CHECK (cluster = lower(cluster) AND cluster <> ''),
    hardware        text    NOT NULL CHECK (hardware = lower(hardware) AND hardware <> ''),
    n_success       integer NOT NULL CHECK (n_success >= 0),
    total           integer NOT NULL CHECK (total >= 0),
    source_artifact text    NOT NULL,
    source_file     text    NOT NULL,
    ingest_id       bigint  NOT NULL REFERENCES ingests (id),
    CHECK (n_success <= total),
    CONSTRAINT run_stats_natural_key UNIQUE (workflow_run_id, cluster)
);
