-- latest_benchmarks by the reference's newest curve rules, kept per curve.
--
-- The rules (the reference app's migrations 011, 014 and 015):
--
-- * A curve is benchmark_curve_scope(...) of a point: model, hardware,
--   framework, precision, benchmark type, isl, osl, and — except for an
--   AgentX curve (benchmark_type 'agentic_traces'), which ignores them —
--   spec method, disagg and offload mode. One AgentX run therefore
--   supersedes every topology and offload variant of its curve.
-- * A curve's runs are ranked newest first (date, then run_started_at with
--   NULLs last, then the highest workflow_run_id); only the latest stored
--   attempt of a GitHub run counts, and only rows without an error.
-- * The newest run is the curve's snapshot. When it is append-only (its
--   changelog entries all say so), has exactly one image on every row, and
--   the next older run has that same single image on every row, the older
--   run's points extend it; the chain continues while each run is
--   append-only, and stops at the first full run, image change or
--   incomplete image. A point (config, type, isl, osl, offload mode,
--   recipe, concurrency) comes from the newest run of the chain that has it.
-- * Every row says which snapshot it belongs to: snapshot_date and
--   snapshot_workflow_run_id of the chain's newest run.
--
-- The reference recomputes this for the whole database on every refresh.
-- Here it is kept per curve, in the writer's own transaction
-- (ingest/store/curves.go): benchmark_curves names each curve once,
-- benchmark_curve_lines holds one row per (curve, run of a latest attempt,
-- date) with what the ranking and the chain rule need, and
-- latest_benchmark_points the rows the dashboard shows; the view
-- latest_benchmarks joins them to benchmark_results, so every value is the
-- stored one. An ingest recomputes only the curves its run touches.

-- The reference's function and view, as it defines them: the site's date
-- and history reads use them.
CREATE FUNCTION benchmark_curve_scope(
    p_model text, p_hardware text, p_framework text, p_precision text,
    p_benchmark_type text, p_isl integer, p_osl integer,
    p_spec_method text, p_disagg boolean, p_offload_mode text
) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_array(
        p_model, p_hardware, p_framework, p_precision, p_benchmark_type, p_isl, p_osl,
        CASE WHEN p_benchmark_type = 'agentic_traces' THEN '' ELSE p_spec_method END,
        CASE WHEN p_benchmark_type = 'agentic_traces' THEN false ELSE p_disagg END,
        CASE WHEN p_benchmark_type = 'agentic_traces' THEN '' ELSE coalesce(p_offload_mode, 'off') END
    )
$$;

CREATE VIEW benchmark_curve_runs AS
SELECT c.model, br.benchmark_type, br.isl, br.osl,
       benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
           br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode) AS curve_scope,
       br.workflow_run_id, br.date, wr.run_started_at, wr.github_run_id, wr.append_only,
       min(br.image) AS image,
       count(DISTINCT br.image) AS image_count,
       bool_and(br.image IS NOT NULL) AS images_complete
FROM benchmark_results br
JOIN configs c ON c.id = br.config_id
JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
WHERE br.error IS NULL
GROUP BY c.model, br.benchmark_type, br.isl, br.osl,
    benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
        br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode),
    br.workflow_run_id, br.date, wr.run_started_at, wr.github_run_id, wr.append_only;

-- One row per curve ever seen. The scope's config fields are columns too
-- (spec_method '' and disagg false on an AgentX curve, as in the scope),
-- so a curve's rows are found through its configs and the natural key of
-- benchmark_results.
CREATE TABLE benchmark_curves (
    id             serial  PRIMARY KEY,
    curve_scope    jsonb   NOT NULL UNIQUE,
    model          text    NOT NULL,
    hardware       text    NOT NULL,
    framework      text    NOT NULL,
    precision      text    NOT NULL,
    benchmark_type text    NOT NULL,
    spec_method    text    NOT NULL,
    disagg         boolean NOT NULL
);

-- One row per (curve, run, date) of the latest attempt of each GitHub run
-- holding error-free rows of the curve: benchmark_curve_runs, kept.
CREATE TABLE benchmark_curve_lines (
    curve_id        integer     NOT NULL,
    workflow_run_id bigint      NOT NULL,
    date            date        NOT NULL,
    run_started_at  timestamptz,
    append_only     boolean     NOT NULL,
    image           text,
    image_count     integer     NOT NULL,
    images_complete boolean     NOT NULL,
    PRIMARY KEY (curve_id, workflow_run_id, date)
);
-- The ranking of a curve's runs, newest first.
CREATE INDEX benchmark_curve_lines_rank_idx ON benchmark_curve_lines
    (curve_id, date DESC, run_started_at DESC NULLS LAST, workflow_run_id DESC);
CREATE INDEX benchmark_curve_lines_run_idx ON benchmark_curve_lines (workflow_run_id);

-- The rows latest_benchmarks shows, with their snapshot.
CREATE TABLE latest_benchmark_points (
    result_id                bigint  PRIMARY KEY,
    curve_id                 integer NOT NULL,
    config_id                integer NOT NULL,
    snapshot_date            date    NOT NULL,
    snapshot_workflow_run_id bigint  NOT NULL
);
CREATE INDEX latest_benchmark_points_config_idx ON latest_benchmark_points (config_id);
CREATE INDEX latest_benchmark_points_curve_idx ON latest_benchmark_points (curve_id);

-- Each ingest replaces the rows of the curves it supersedes: vacuum these
-- small tables early, so that dead rows never pile up under the reads.
ALTER TABLE benchmark_curve_lines SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE latest_benchmark_points SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);

DROP MATERIALIZED VIEW latest_benchmarks;

-- The reference's columns: benchmark_results' (br.*), then the snapshot.
CREATE VIEW latest_benchmarks AS
SELECT br.id, br.workflow_run_id, p.config_id, br.benchmark_type, br.date,
       br.isl, br.osl, br.conc, br.image, br.metrics, br.error, br.server_log_id,
       br.workers, br.offload_mode, br.trace_replay_id, br.recipe_fingerprint,
       br.power_invalid_reasons, br.power_audit,
       p.snapshot_date, p.snapshot_workflow_run_id
FROM latest_benchmark_points p
JOIN benchmark_results br ON br.id = p.result_id;

-- The whole build, once, from what is stored (later changes are applied
-- per curve by the store).
INSERT INTO benchmark_curves (curve_scope, model, hardware, framework, precision, benchmark_type, spec_method, disagg)
SELECT DISTINCT ON (s.scope) s.scope, s.model, s.hardware, s.framework, s.precision, s.benchmark_type,
       s.scope->>7, (s.scope->>8)::boolean
FROM (SELECT benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
              br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode) AS scope,
             c.model, c.hardware, c.framework, c.precision, br.benchmark_type
      FROM benchmark_results br JOIN configs c ON c.id = br.config_id
      WHERE br.error IS NULL) s;

INSERT INTO benchmark_curve_lines
SELECT k.id, r.workflow_run_id, r.date, r.run_started_at, r.append_only, r.image, r.image_count, r.images_complete
FROM benchmark_curve_runs r JOIN benchmark_curves k ON k.curve_scope = r.curve_scope;

INSERT INTO latest_benchmark_points
WITH RECURSIVE ranked AS (
    SELECT l.*, row_number() OVER (PARTITION BY l.curve_id
               ORDER BY l.date DESC, l.run_started_at DESC NULLS LAST, l.workflow_run_id DESC) AS run_rank
    FROM benchmark_curve_lines l
), chain AS (
    SELECT r.*, r.image AS root_image, r.date AS snapshot_date, r.workflow_run_id AS snapshot_workflow_run_id
    FROM ranked r WHERE r.run_rank = 1
    UNION ALL
    SELECT o.*, c.root_image, c.snapshot_date, c.snapshot_workflow_run_id
    FROM chain c JOIN ranked o ON o.curve_id = c.curve_id AND o.run_rank = c.run_rank + 1
    WHERE c.append_only AND c.image_count = 1 AND c.images_complete
      AND o.image_count = 1 AND o.images_complete AND o.image = c.root_image
)
SELECT DISTINCT ON (br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode, br.recipe_fingerprint, br.conc)
       br.id, ch.curve_id, br.config_id, ch.snapshot_date, ch.snapshot_workflow_run_id
FROM chain ch
JOIN benchmark_curves k ON k.id = ch.curve_id
JOIN benchmark_results br ON br.workflow_run_id = ch.workflow_run_id AND br.error IS NULL
JOIN configs c ON c.id = br.config_id
WHERE benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
          br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode) = k.curve_scope
ORDER BY br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode, br.recipe_fingerprint, br.conc, ch.run_rank;

-- Change marks name the run whose rows changed (NULL: recompute every
-- curve) and the transaction that made them: an ingest applies its own
-- marks before it commits; the others wait for the next refresh.
ALTER TABLE materialized_view_marks
    ADD COLUMN workflow_run_id bigint,
    ADD COLUMN xact xid8 NOT NULL DEFAULT pg_current_xact_id();
-- What was pending is recomputed in full by the next refresh.
UPDATE materialized_view_marks SET workflow_run_id = NULL;
CREATE INDEX materialized_view_marks_xact_idx ON materialized_view_marks (xact);

DROP TRIGGER benchmark_results_mark_insert ON benchmark_results;
DROP TRIGGER benchmark_results_mark_update ON benchmark_results;
DROP TRIGGER benchmark_results_mark_delete ON benchmark_results;
DROP TRIGGER workflow_runs_mark_insert ON workflow_runs;
DROP TRIGGER workflow_runs_mark_update ON workflow_runs;
DROP TRIGGER workflow_runs_mark_delete ON workflow_runs;
DROP FUNCTION latest_benchmarks_mark_rows();
DROP FUNCTION latest_benchmarks_mark_run();

-- Inserted and deleted rows mark their runs, one mark per run and statement.
CREATE FUNCTION latest_benchmarks_mark_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause, workflow_run_id)
    SELECT DISTINCT 'latest_benchmarks', 'benchmark_results ' || lower(TG_OP), workflow_run_id FROM changed_rows;
    RETURN NULL;
END $$;

-- An update marks a run only when it changed what places a row on a
-- curve (its key, error, image or date); new metrics, trace or log links
-- show through the view as they are.
CREATE FUNCTION latest_benchmarks_mark_updated_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause, workflow_run_id)
    SELECT DISTINCT 'latest_benchmarks', 'benchmark_results update', run
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    CROSS JOIN LATERAL (VALUES (o.workflow_run_id), (n.workflow_run_id)) AS v (run)
    WHERE (o.workflow_run_id, o.config_id, o.benchmark_type, o.isl, o.osl, o.conc, o.offload_mode,
           o.recipe_fingerprint, o.error, o.image, o.date)
          IS DISTINCT FROM
          (n.workflow_run_id, n.config_id, n.benchmark_type, n.isl, n.osl, n.conc, n.offload_mode,
           n.recipe_fingerprint, n.error, n.image, n.date);
    RETURN NULL;
END $$;

-- A truncate marks every curve.
CREATE FUNCTION latest_benchmarks_mark_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause) VALUES ('latest_benchmarks', lower(TG_TABLE_NAME) || ' truncate');
    RETURN NULL;
END $$;

CREATE TRIGGER benchmark_results_mark_insert AFTER INSERT ON benchmark_results
    REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_rows();
CREATE TRIGGER benchmark_results_mark_update AFTER UPDATE ON benchmark_results
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_updated_rows();
CREATE TRIGGER benchmark_results_mark_delete AFTER DELETE ON benchmark_results
    REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_rows();
CREATE TRIGGER benchmark_results_mark_truncate AFTER TRUNCATE ON benchmark_results
    FOR EACH STATEMENT EXECUTE FUNCTION latest_benchmarks_mark_all();

-- A run row: a new attempt hides the older attempts' rows, date and start
-- order the runs, append_only decides the chains.
CREATE FUNCTION latest_benchmarks_mark_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause, workflow_run_id)
    VALUES ('latest_benchmarks', 'workflow_runs ' || lower(TG_OP),
            CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
    RETURN NULL;
END $$;

CREATE TRIGGER workflow_runs_mark_insert AFTER INSERT ON workflow_runs
    FOR EACH ROW EXECUTE FUNCTION latest_benchmarks_mark_run();
CREATE TRIGGER workflow_runs_mark_update AFTER UPDATE ON workflow_runs
    FOR EACH ROW
    WHEN (OLD.date IS DISTINCT FROM NEW.date OR OLD.run_started_at IS DISTINCT FROM NEW.run_started_at
          OR OLD.run_attempt IS DISTINCT FROM NEW.run_attempt OR OLD.github_run_id IS DISTINCT FROM NEW.github_run_id
          OR OLD.append_only IS DISTINCT FROM NEW.append_only)
    EXECUTE FUNCTION latest_benchmarks_mark_run();
CREATE TRIGGER workflow_runs_mark_delete AFTER DELETE ON workflow_runs
    FOR EACH ROW EXECUTE FUNCTION latest_benchmarks_mark_run();
