-- An update of benchmark_results marks the runs whose rows changed place
-- on a curve. 000013 found them by joining the statement's old and new
-- rows on id; the transition tables carry no statistics, the planner
-- takes each for one row and joins them in a nested loop, so an update of
-- n rows cost n² comparisons (750 rows: 562 500, ~60 ms of a first ingest;
-- an override touching 10 000 rows: 10⁸). Two set differences find the
-- same rows in time linear in n whatever the plan: a row whose placement
-- changed is in old EXCEPT new (its old run) and in new EXCEPT old (its
-- new run); rows that kept their place cancel out. EXCEPT compares NULLs
-- as equal, as IS DISTINCT FROM did.
CREATE OR REPLACE FUNCTION latest_benchmarks_mark_updated_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO materialized_view_marks (view_name, cause, workflow_run_id)
    SELECT DISTINCT 'latest_benchmarks', 'benchmark_results update', d.workflow_run_id
    FROM (
        (SELECT id, workflow_run_id, config_id, benchmark_type, isl, osl, conc, offload_mode,
                recipe_fingerprint, error, image, date FROM old_rows
         EXCEPT
         SELECT id, workflow_run_id, config_id, benchmark_type, isl, osl, conc, offload_mode,
                recipe_fingerprint, error, image, date FROM new_rows)
        UNION ALL
        (SELECT id, workflow_run_id, config_id, benchmark_type, isl, osl, conc, offload_mode,
                recipe_fingerprint, error, image, date FROM new_rows
         EXCEPT
         SELECT id, workflow_run_id, config_id, benchmark_type, isl, osl, conc, offload_mode,
                recipe_fingerprint, error, image, date FROM old_rows)
    ) d;
    RETURN NULL;
END $$;
