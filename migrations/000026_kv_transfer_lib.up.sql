-- The KV-cache transfer library of a disaggregated point (mooncake, nixl,
-- mori, ucx, …), as the producer names it on a benchmark row
-- (`kv_transfer_lib`, lower case). A value of the row, not of its config
-- or point: it is not part of either natural key, so a config and its
-- curve keep their identity when the producer starts naming the library.
-- NULL: not named (older rows, aggregated runs, an unresolved recipe).
ALTER TABLE benchmark_results ADD COLUMN kv_transfer_lib text;
ALTER TABLE benchmark_results ADD CONSTRAINT benchmark_results_kv_transfer_lib_lowercase
    CHECK (kv_transfer_lib IS NULL OR kv_transfer_lib = lower(kv_transfer_lib));

-- The site reads it from latest_benchmarks too (by name, from the row's
-- JSON): the view gains the column after the snapshot.
CREATE OR REPLACE VIEW latest_benchmarks AS
SELECT br.id, br.workflow_run_id, p.config_id, br.benchmark_type, br.date,
       br.isl, br.osl, br.conc, br.image, br.metrics, br.error, br.server_log_id,
       br.workers, br.offload_mode, br.trace_replay_id, br.recipe_fingerprint,
       br.power_invalid_reasons, br.power_audit,
       p.snapshot_date, p.snapshot_workflow_run_id, br.kv_transfer_lib
FROM latest_benchmark_points p
JOIN benchmark_results br ON br.id = p.result_id;
