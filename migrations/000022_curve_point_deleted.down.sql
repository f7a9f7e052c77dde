DROP TRIGGER benchmark_results_deleted_points ON benchmark_results;
DROP FUNCTION latest_benchmark_points_deleted();
ALTER TABLE latest_benchmark_points DROP COLUMN result_deleted;
