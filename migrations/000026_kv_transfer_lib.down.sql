DROP VIEW latest_benchmarks;
CREATE VIEW latest_benchmarks AS
SELECT br.id, br.workflow_run_id, p.config_id, br.benchmark_type, br.date,
       br.isl, br.osl, br.conc, br.image, br.metrics, br.error, br.server_log_id,
       br.workers, br.offload_mode, br.trace_replay_id, br.recipe_fingerprint,
       br.power_invalid_reasons, br.power_audit,
       p.snapshot_date, p.snapshot_workflow_run_id
FROM latest_benchmark_points p
JOIN benchmark_results br ON br.id = p.result_id;
ALTER TABLE benchmark_results DROP COLUMN kv_transfer_lib;
