-- latest_benchmark_points keeps, beside each shown row's id, what the
-- impact section of a report compares: the row's run and point key and
-- five metrics. The impact reads the points a run replaces from here
-- instead of from benchmark_results, whose rows of an older run are cold
-- (a heap page and often a TOAST fetch each: 4000 rows took ~300 ms of a
-- 2000-point ingest at 50 stored runs, against ~10 ms warm).

-- The five values of a metrics document, numbers only (NULL otherwise),
-- read with one pass over the document; a set-returning SQL function, so
-- the planner inlines it.
CREATE FUNCTION benchmark_impact_values(m jsonb)
RETURNS TABLE (tput_per_gpu float8, output_tput_per_gpu float8, median_intvty float8, p90_e2el float8, median_ttft float8)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(x.tput_per_gpu) = 'number' THEN x.tput_per_gpu::float8 END,
           CASE WHEN jsonb_typeof(x.output_tput_per_gpu) = 'number' THEN x.output_tput_per_gpu::float8 END,
           CASE WHEN jsonb_typeof(x.median_intvty) = 'number' THEN x.median_intvty::float8 END,
           CASE WHEN jsonb_typeof(x.p90_e2el) = 'number' THEN x.p90_e2el::float8 END,
           CASE WHEN jsonb_typeof(x.median_ttft) = 'number' THEN x.median_ttft::float8 END
    FROM jsonb_to_record(CASE WHEN jsonb_typeof(m) = 'object' THEN m END)
        AS x (tput_per_gpu jsonb, output_tput_per_gpu jsonb, median_intvty jsonb, p90_e2el jsonb, median_ttft jsonb)
$$;

ALTER TABLE latest_benchmark_points
    ADD COLUMN workflow_run_id     bigint,
    ADD COLUMN benchmark_type      text,
    ADD COLUMN isl                 integer,
    ADD COLUMN osl                 integer,
    ADD COLUMN offload_mode        text,
    ADD COLUMN recipe_fingerprint  text,
    ADD COLUMN conc                integer,
    ADD COLUMN tput_per_gpu        float8,
    ADD COLUMN output_tput_per_gpu float8,
    ADD COLUMN median_intvty       float8,
    ADD COLUMN p90_e2el            float8,
    ADD COLUMN median_ttft         float8;

UPDATE latest_benchmark_points p
SET workflow_run_id = b.workflow_run_id, benchmark_type = b.benchmark_type, isl = b.isl, osl = b.osl,
    offload_mode = b.offload_mode, recipe_fingerprint = b.recipe_fingerprint, conc = b.conc,
    tput_per_gpu = v.tput_per_gpu, output_tput_per_gpu = v.output_tput_per_gpu, median_intvty = v.median_intvty,
    p90_e2el = v.p90_e2el, median_ttft = v.median_ttft
FROM benchmark_results b
LEFT JOIN LATERAL benchmark_impact_values(b.metrics) v ON true
WHERE b.id = p.result_id;

-- A shown row whose point key or metrics change in place (an override's
-- new metrics, a rerun's refreshed row) has its kept values brought up to
-- date. Row-level, and only for rows whose values changed: one primary-key
-- probe each, whatever the statement's size (a statement-level join of the
-- transition table has no statistics to plan with, see 000020).
CREATE FUNCTION latest_benchmark_points_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE latest_benchmark_points p
    SET workflow_run_id = NEW.workflow_run_id, benchmark_type = NEW.benchmark_type, isl = NEW.isl, osl = NEW.osl,
        offload_mode = NEW.offload_mode, recipe_fingerprint = NEW.recipe_fingerprint, conc = NEW.conc,
        tput_per_gpu = v.tput_per_gpu, output_tput_per_gpu = v.output_tput_per_gpu, median_intvty = v.median_intvty,
        p90_e2el = v.p90_e2el, median_ttft = v.median_ttft
    FROM benchmark_impact_values(NEW.metrics) v
    WHERE p.result_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER benchmark_results_refresh_points AFTER UPDATE ON benchmark_results
    FOR EACH ROW
    WHEN (OLD.metrics IS DISTINCT FROM NEW.metrics
          OR (OLD.workflow_run_id, OLD.benchmark_type, OLD.isl, OLD.osl, OLD.offload_mode, OLD.recipe_fingerprint, OLD.conc)
             IS DISTINCT FROM
             (NEW.workflow_run_id, NEW.benchmark_type, NEW.isl, NEW.osl, NEW.offload_mode, NEW.recipe_fingerprint, NEW.conc))
    EXECUTE FUNCTION latest_benchmark_points_refresh();
