-- Back to 000013's join of the old and new rows.
CREATE OR REPLACE FUNCTION latest_benchmarks_mark_updated_rows() RETURNS trigger LANGUAGE plpgsql AS $$
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
