DROP TABLE IF EXISTS run_stats;
DROP TABLE IF EXISTS availability;
DROP TABLE IF EXISTS benchmark_results;
DROP TABLE IF EXISTS ingests;
DROP TABLE IF EXISTS configs;
DROP VIEW IF EXISTS latest_workflow_runs;
DROP TABLE IF EXISTS workflow_runs;
