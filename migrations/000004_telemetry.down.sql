DROP TABLE IF EXISTS benchmark_result_gpu_metrics;
DROP TABLE IF EXISTS gpu_metric_samples;
DROP TABLE IF EXISTS gpu_metric_series;
DROP FUNCTION IF EXISTS gpu_metric_series_delete_samples();
