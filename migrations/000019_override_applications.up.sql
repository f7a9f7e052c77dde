-- The ledger of `ingest overrides apply`: one row per apply that was not a
-- dry run, with the digest of the plan it applied (the run-override
-- ledger and source policies as loaded), whether it changed anything, and
-- what it deleted and rewrote (schema.OverrideResult). Not data: no
-- data_changes trigger.
CREATE TABLE override_applications (
    id           bigserial   PRIMARY KEY,
    applied_at   timestamptz NOT NULL DEFAULT now(),
    tool_version text        NOT NULL DEFAULT '',
    plan_digest  bytea       NOT NULL CHECK (length(plan_digest) = 32),
    changed      boolean     NOT NULL,
    result       jsonb       NOT NULL
);
