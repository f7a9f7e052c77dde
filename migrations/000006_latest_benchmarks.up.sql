-- latest_benchmarks: the dashboard's chart data, as the reference ingest's
-- materialized view of the same name (one run per line, no stitching).
--
-- A line is (config_id, benchmark_type, isl, osl, offload_mode) plotted
-- across concurrencies, and it comes from ONE workflow run: per line the
-- newest run wins (newest date, then latest run_started_at, then the highest
-- workflow_run_id, so exactly one run wins even on a same-day or NULL tie),
-- and every concurrency that run measured is kept. A partial re-sweep
-- therefore truncates the line to its own concurrencies. Only the latest
-- attempt of a GitHub run counts (latest_workflow_runs); errored rows
-- (error IS NOT NULL) neither win a line nor appear in it.
--
-- The columns are the reference's benchmark_results columns (not our
-- provenance columns), named so that later migrations of
-- benchmark_results do not have to touch the view.
CREATE MATERIALIZED VIEW latest_benchmarks AS
WITH winners AS (
    SELECT DISTINCT ON (br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode)
           br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode,
           br.workflow_run_id AS winning_run_id
    FROM benchmark_results br
    JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
    WHERE br.error IS NULL
    ORDER BY br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode,
             br.date DESC, wr.run_started_at DESC NULLS LAST, br.workflow_run_id DESC
)
SELECT br.id, br.workflow_run_id, br.config_id, br.benchmark_type, br.date,
       br.isl, br.osl, br.conc, br.image, br.metrics, br.error, br.server_log_id,
       br.workers, br.offload_mode, br.trace_replay_id, br.recipe_fingerprint,
       br.power_invalid_reasons, br.power_audit
FROM benchmark_results br
JOIN winners w
  ON  w.config_id      = br.config_id
  AND w.benchmark_type = br.benchmark_type
  AND w.isl IS NOT DISTINCT FROM br.isl
  AND w.osl IS NOT DISTINCT FROM br.osl
  AND w.offload_mode   = br.offload_mode
  AND w.winning_run_id = br.workflow_run_id
WHERE br.error IS NULL;

-- One winning run per line gives one row per concurrency and recipe, so
-- this key is unique; REFRESH MATERIALIZED VIEW CONCURRENTLY needs it.
CREATE UNIQUE INDEX latest_benchmarks_pk ON latest_benchmarks
    (config_id, conc, isl, osl, benchmark_type, offload_mode, recipe_fingerprint) NULLS NOT DISTINCT;
CREATE INDEX latest_benchmarks_config_idx ON latest_benchmarks (config_id);

-- Refresh bookkeeping. Every change that can move the view (a benchmark
-- row inserted, updated or deleted; a new attempt of a run, or a run whose
-- date or start time changed) inserts a mark, from a trigger, in the
-- writer's own transaction: a dry run's marks roll back with it, and
-- concurrent ingests never wait on each other (marks are inserts, not
-- updates of one row). The view is stale while marks exist. A successful
-- refresh deletes the marks it saw before it began; a failed one leaves
-- them, records its error, and the next ingest (or `ingest refresh`)
-- retries. A refresh is skipped when there is no mark.
CREATE TABLE materialized_view_marks (
    id        bigserial   PRIMARY KEY,
    view_name text        NOT NULL,
    marked_at timestamptz NOT NULL DEFAULT now(),
    cause     text        NOT NULL
);

CREATE TABLE materialized_view_state (
    view_name        text        PRIMARY KEY,
    refreshed_at     timestamptz,
    last_attempt_at  timestamptz,
    last_duration_ms bigint,
    last_error       text
);
INSERT INTO materialized_view_state (view_name, refreshed_at) VALUES ('latest_benchmarks', now());

-- Statement-level: one mark per statement that changed at least one row.
CREATE FUNCTION latest_benchmarks_mark_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows) THEN
        INSERT INTO materialized_view_marks (view_name, cause)
        VALUES ('latest_benchmarks', 'benchmark_results ' || lower(TG_OP));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER benchmark_results_mark_insert AFTER INSERT ON benchmark_results
    REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_rows();
CREATE TRIGGER benchmark_results_mark_update AFTER UPDATE ON benchmark_results
    REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_rows();
CREATE TRIGGER benchmark_results_mark_delete AFTER DELETE ON benchmark_results
    REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_rows();

-- Row-level on workflow_runs: a new attempt hides the older attempt's rows
-- (latest_workflow_runs), and date / run_started_at order the runs.
CREATE FUNCTION latest_benchmarks_mark_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause)
    VALUES ('latest_benchmarks', 'workflow_runs ' || lower(TG_OP));
    RETURN NULL;
END $$;

CREATE TRIGGER workflow_runs_mark_insert AFTER INSERT ON workflow_runs
    FOR EACH ROW EXECUTE FUNCTION latest_benchmarks_mark_run();
CREATE TRIGGER workflow_runs_mark_update AFTER UPDATE ON workflow_runs
    FOR EACH ROW
    WHEN (OLD.date IS DISTINCT FROM NEW.date OR OLD.run_started_at IS DISTINCT FROM NEW.run_started_at
          OR OLD.run_attempt IS DISTINCT FROM NEW.run_attempt OR OLD.github_run_id IS DISTINCT FROM NEW.github_run_id)
    EXECUTE FUNCTION latest_benchmarks_mark_run();
CREATE TRIGGER workflow_runs_mark_delete AFTER DELETE ON workflow_runs
    FOR EACH ROW EXECUTE FUNCTION latest_benchmarks_mark_run();
