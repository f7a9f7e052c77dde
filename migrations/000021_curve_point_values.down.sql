DROP TRIGGER benchmark_results_refresh_points ON benchmark_results;
DROP FUNCTION latest_benchmark_points_refresh();

ALTER TABLE latest_benchmark_points
    DROP COLUMN workflow_run_id, DROP COLUMN benchmark_type, DROP COLUMN isl, DROP COLUMN osl,
    DROP COLUMN offload_mode, DROP COLUMN recipe_fingerprint, DROP COLUMN conc,
    DROP COLUMN tput_per_gpu, DROP COLUMN output_tput_per_gpu, DROP COLUMN median_intvty,
    DROP COLUMN p90_e2el, DROP COLUMN median_ttft;

DROP FUNCTION benchmark_impact_values(jsonb);
