-- Backfill passes and their queue of runs. Workers started with the same
-- parameters (the key) share the active pass of that key: each claims one
-- pending run at a time with FOR UPDATE SKIP LOCKED inside a transaction it
-- holds while it ingests the run, so a run is worked on by one worker only
-- and a killed worker's claim is released with its connection.
CREATE TABLE backfills (
    id          bigserial   PRIMARY KEY,
    -- key is a digest of what the pass covers (repository, source, filters,
    -- reingest); params is the same in readable form.
    key         text        NOT NULL,
    repo        text        NOT NULL,
    params      jsonb       NOT NULL,
    reingest    boolean     NOT NULL DEFAULT false,
    -- ledger_mark is the newest ledger id when the pass began: with
    -- reingest, only a later successful ingest counts as done.
    ledger_mark bigint      NOT NULL DEFAULT 0,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
-- One active (unfinished) pass per key.
CREATE UNIQUE INDEX backfills_active_key ON backfills (key) WHERE finished_at IS NULL;

CREATE TABLE backfill_runs (
    backfill_id    bigint      NOT NULL REFERENCES backfills (id) ON DELETE CASCADE,
    github_run_id  bigint      NOT NULL CHECK (github_run_id > 0),
    -- run_attempt is the run's latest attempt as listed, then as ingested.
    run_attempt    integer     CHECK (run_attempt IS NULL OR run_attempt BETWEEN 1 AND 32767),
    run_created_at timestamptz,
    -- tree is the run tree of a --from-dir backfill.
    tree           text,
    state          text        NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'ingested', 'skipped', 'failed')),
    ingest_id      bigint      REFERENCES ingests (id),
    ingest_status  text,
    worker         text,
    -- detail is why the run was skipped, or why it failed.
    detail         text,
    duration_ms    bigint,
    finished_at    timestamptz,
    PRIMARY KEY (backfill_id, github_run_id),
    CHECK ((state = 'pending') = (finished_at IS NULL))
);
-- The queue, oldest run first.
CREATE INDEX backfill_runs_pending ON backfill_runs (backfill_id, run_created_at, github_run_id)
    WHERE state = 'pending';
CREATE INDEX backfill_runs_ingest ON backfill_runs (ingest_id) WHERE ingest_id IS NOT NULL;
