DROP INDEX ingests_data_xact_idx;
ALTER TABLE ingests
    DROP COLUMN unchanged_since,
    DROP COLUMN data_snapshot,
    DROP COLUMN data_xact,
    DROP COLUMN input_files,
    DROP COLUMN input_digest;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY[
        'workflow_runs', 'configs', 'benchmark_results', 'availability', 'run_stats',
        'eval_results', 'eval_sample_texts', 'eval_samples', 'changelog_entries',
        'trace_blobs', 'trace_blob_chunks', 'agentic_trace_replay', 'server_logs', 'server_log_files',
        'run_datasets', 'gpu_metric_series', 'gpu_metric_samples', 'benchmark_result_gpu_metrics']
    LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', t || '_note_change', t);
    END LOOP;
END $$;

DROP FUNCTION note_data_change();
DROP TABLE data_changes;
