-- Evals, their per-document samples (with the document and prompt texts
-- stored once), and the changelog entries of a run.

CREATE TABLE eval_results (
    id                 bigserial PRIMARY KEY,
    workflow_run_id    bigint  NOT NULL REFERENCES workflow_runs (id),
    config_id          integer NOT NULL REFERENCES configs (id),
    task               text    NOT NULL CHECK (task = lower(task) AND task <> ''),
    date               date    NOT NULL,
    isl                integer CHECK (isl IS NULL OR isl > 0),
    osl                integer CHECK (osl IS NULL OR osl > 0),
    conc               integer CHECK (conc IS NULL OR conc > 0),
    lm_eval_version    text,
    -- em_strict, em_strict_se, em_flexible, em_flexible_se, n_eff, score,
    -- score_name, score_se, and every other numeric metric of the task.
    metrics            jsonb   NOT NULL,
    -- sha256 (first 16 bytes) of the key and every stored value: a rerun
    -- with the same content writes nothing.
    content_digest     bytea   NOT NULL,
    -- the samples file whose every line is stored for this row: its name,
    -- sha256 and line count. A rerun finds the same file by its digest and
    -- skips parsing it. NULL until a file was read without a bad line.
    samples_file       text,
    samples_digest     bytea,
    samples_lines      integer,
    -- provenance: the artifact, file and row (task index or array index)
    -- this row was read from, and the ingest that wrote it.
    source_artifact    text    NOT NULL,
    source_artifact_id bigint,
    source_file        text    NOT NULL,
    source_row         integer NOT NULL,
    ingest_id          bigint  NOT NULL REFERENCES ingests (id),
    CONSTRAINT eval_results_natural_key UNIQUE NULLS NOT DISTINCT (
        workflow_run_id, config_id, task, isl, osl, conc)
);
CREATE INDEX eval_results_config_idx ON eval_results (config_id);

-- The texts that repeat: the benchmark document (JSON) and the rendered
-- prompt, the same for every config that ran the task, and the raw model
-- outputs (resps, JSON), the same for every filter line of one document.
-- Keyed by sha256(kind NUL content): a sample references them, so sample
-- storage grows with the responses, not with copies of the questions.
CREATE TABLE eval_sample_texts (
    digest  bytea NOT NULL PRIMARY KEY CHECK (length(digest) = 32),
    kind    text  NOT NULL CHECK (kind IN ('doc', 'prompt', 'resps')),
    content text  NOT NULL
);

-- One row per (document, filter) line of an lm-eval samples file. The
-- digests name rows of eval_sample_texts, written before the samples in the
-- same transaction; they are not foreign keys, which would cost three
-- lookups per sample line (a run has hundreds of thousands).
CREATE TABLE eval_samples (
    id             bigserial PRIMARY KEY,
    eval_result_id bigint  NOT NULL REFERENCES eval_results (id) ON DELETE CASCADE,
    doc_id         integer NOT NULL CHECK (doc_id >= 0),
    filter         text    NOT NULL DEFAULT '',
    doc_digest     bytea,
    prompt_digest  bytea,
    target         text,
    response       text,
    passed         boolean,
    score          double precision,
    -- numeric metrics of the line (exact_match, acc, …)
    metrics        jsonb,
    -- the raw model outputs (resps) live in eval_sample_texts
    resps_digest   bytea,
    filtered_resps jsonb,
    -- what else the line carries (generation arguments, lm-eval hashes, …)
    data           jsonb,
    source_file    text    NOT NULL,
    source_line    integer NOT NULL,
    ingest_id      bigint  NOT NULL REFERENCES ingests (id),
    CONSTRAINT eval_samples_natural_key UNIQUE (eval_result_id, doc_id, filter)
);
CREATE INDEX eval_samples_passed_idx ON eval_samples (eval_result_id, passed);

-- Every entry of a run's changelog-metadata (or the one fallback entry
-- described from the run's metadata). workflow_run_id is the run the rows
-- are attributed to; merge_run_* name the run whose changelog it is (the
-- same run unless a pull request's sweep was reused at merge time).
CREATE TABLE changelog_entries (
    id                  bigserial PRIMARY KEY,
    workflow_run_id     bigint   NOT NULL REFERENCES workflow_runs (id),
    merge_run_id        bigint   NOT NULL CHECK (merge_run_id > 0),
    merge_run_attempt   smallint NOT NULL CHECK (merge_run_attempt >= 1),
    merge_run_url       text,
    date                date     NOT NULL,
    base_ref            text     NOT NULL,
    head_ref            text     NOT NULL,
    entry_index         integer  NOT NULL CHECK (entry_index >= 0),
    config_keys         text[]   NOT NULL,
    description         text     NOT NULL,
    pr_link             text,
    evals_only          boolean  NOT NULL DEFAULT false,
    all_evals           boolean  NOT NULL DEFAULT false,
    append_only         boolean  NOT NULL DEFAULT false,
    eval_min_prefill_ep integer,
    scenario_types      text[],
    is_fallback         boolean  NOT NULL DEFAULT false,
    source_artifact     text,
    source_file         text,
    ingest_id           bigint   NOT NULL REFERENCES ingests (id),
    CONSTRAINT changelog_entries_natural_key UNIQUE (workflow_run_id, base_ref, head_ref, entry_index)
);
