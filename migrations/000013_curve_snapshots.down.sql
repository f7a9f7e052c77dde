-- Back to migration 000006's materialized view (one run per line) and its
-- marks.
DROP TRIGGER IF EXISTS workflow_runs_mark_delete ON workflow_runs;
DROP TRIGGER IF EXISTS workflow_runs_mark_update ON workflow_runs;
DROP TRIGGER IF EXISTS workflow_runs_mark_insert ON workflow_runs;
DROP TRIGGER IF EXISTS benchmark_results_mark_truncate ON benchmark_results;
DROP TRIGGER IF EXISTS benchmark_results_mark_delete ON benchmark_results;
DROP TRIGGER IF EXISTS benchmark_results_mark_update ON benchmark_results;
DROP TRIGGER IF EXISTS benchmark_results_mark_insert ON benchmark_results;
DROP FUNCTION IF EXISTS latest_benchmarks_mark_run();
DROP FUNCTION IF EXISTS latest_benchmarks_mark_all();
DROP FUNCTION IF EXISTS latest_benchmarks_mark_updated_rows();
DROP FUNCTION IF EXISTS latest_benchmarks_mark_rows();

DROP INDEX IF EXISTS materialized_view_marks_xact_idx;
ALTER TABLE materialized_view_marks DROP COLUMN IF EXISTS xact, DROP COLUMN IF EXISTS workflow_run_id;

DROP VIEW IF EXISTS latest_benchmarks;
DROP TABLE IF EXISTS latest_benchmark_points;
DROP TABLE IF EXISTS benchmark_curve_lines;
DROP TABLE IF EXISTS benchmark_curves;
DROP VIEW IF EXISTS benchmark_curve_runs;
DROP FUNCTION IF EXISTS benchmark_curve_scope(text, text, text, text, text, integer, integer, text, boolean, text);

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
CREATE UNIQUE INDEX latest_benchmarks_pk ON latest_benchmarks
    (config_id, conc, isl, osl, benchmark_type, offload_mode, recipe_fingerprint) NULLS NOT DISTINCT;
CREATE INDEX latest_benchmarks_config_idx ON latest_benchmarks (config_id);

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

-- The view's contents are rebuilt by the next refresh.
INSERT INTO materialized_view_marks (view_name, cause) VALUES ('latest_benchmarks', 'migration 000013 down');
