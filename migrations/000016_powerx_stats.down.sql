DROP TABLE gpu_metric_gpu_stats;
ALTER TABLE gpu_metric_series
    DROP COLUMN stats_version,
    DROP COLUMN sidecars,
    DROP COLUMN csv_sha256;
