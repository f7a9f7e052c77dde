-- PowerX reads (the site's gpu-metrics.ts and gpu-metrics-revision.ts) need
-- what the reference's migrations 016 and 017 give gpu_metric_series and a
-- per-GPU digest table, under the reference's names and types:
--
-- csv_sha256    hex sha256 of the telemetry CSV's bytes (a DCGM bundle's
--               host series share the bundle's); '' for a series stored
--               before this migration, until it is read again.
-- sidecars      the parsed sidecars of the CSV (collector context, GPU
--               identity, AMD energy counters, a power bundle's manifest and
--               window validations, the artifact's series inventory), as the
--               reference ingest builds them (docs/schema.md).
-- stats_version the digest algorithm the gpu_metric_gpu_stats rows were
--               computed with (the reference's GPU_STATS_VERSION, 1); 0 means
--               none.
ALTER TABLE gpu_metric_series
    ADD COLUMN csv_sha256    text    NOT NULL DEFAULT '',
    ADD COLUMN sidecars      jsonb   NOT NULL DEFAULT '{}'::jsonb,
    ADD COLUMN stats_version integer NOT NULL DEFAULT 0;
ALTER TABLE gpu_metric_series ALTER COLUMN csv_sha256 DROP DEFAULT;

-- One row per (series, GPU, metric) with at least one value: count, min,
-- max, mean, median, p95, p99 (linear interpolation at p·(n−1) of the
-- sorted values) and the population standard deviation, over every
-- non-null sample of the series. metric is the sample column's name.
CREATE TABLE gpu_metric_gpu_stats (
    series_id     bigint   NOT NULL REFERENCES gpu_metric_series (id) ON DELETE CASCADE,
    gpu_index     smallint NOT NULL,
    metric        text     NOT NULL,
    sample_count  integer  NOT NULL,
    min_value     real     NOT NULL,
    max_value     real     NOT NULL,
    mean_value    real     NOT NULL,
    median_value  real     NOT NULL,
    p95_value     real     NOT NULL,
    p99_value     real     NOT NULL,
    stddev_value  real     NOT NULL,
    CONSTRAINT gpu_metric_gpu_stats_metric_nonempty CHECK (metric <> ''),
    CONSTRAINT gpu_metric_gpu_stats_sample_count_positive CHECK (sample_count > 0),
    PRIMARY KEY (series_id, gpu_index, metric)
);

-- The unchanged-rerun check notes every writer of a data table (000010).
CREATE TRIGGER gpu_metric_gpu_stats_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON gpu_metric_gpu_stats FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

-- Series already stored get their digest from their stored samples, as the
-- reference's refresh of an outdated digest does (samples carry no foreign
-- key: only those of a stored series count).
INSERT INTO gpu_metric_gpu_stats (series_id, gpu_index, metric, sample_count, min_value, max_value,
    mean_value, median_value, p95_value, p99_value, stddev_value)
SELECT s.series_id, s.gpu_index, m.metric, count(*), min(m.v), max(m.v), avg(m.v),
    percentile_cont(0.5) WITHIN GROUP (ORDER BY m.v),
    percentile_cont(0.95) WITHIN GROUP (ORDER BY m.v),
    percentile_cont(0.99) WITHIN GROUP (ORDER BY m.v),
    stddev_pop(m.v)
FROM gpu_metric_samples s
JOIN gpu_metric_series g ON g.id = s.series_id
CROSS JOIN LATERAL (VALUES
    ('power_w', s.power_w::float8), ('temperature_c', s.temperature_c::float8),
    ('sm_clock_mhz', s.sm_clock_mhz::float8), ('mem_clock_mhz', s.mem_clock_mhz::float8),
    ('gpu_util_pct', s.gpu_util_pct::float8), ('mem_util_pct', s.mem_util_pct::float8),
    ('edge_temp_c', s.edge_temp_c::float8), ('mem_temp_c', s.mem_temp_c::float8),
    ('gfx_voltage_mv', s.gfx_voltage_mv::float8), ('soc_voltage_mv', s.soc_voltage_mv::float8),
    ('mem_voltage_mv', s.mem_voltage_mv::float8), ('fclk_mhz', s.fclk_mhz::float8),
    ('socclk_mhz', s.socclk_mhz::float8), ('mm_activity_pct', s.mm_activity_pct::float8)
) AS m(metric, v)
WHERE m.v IS NOT NULL
GROUP BY s.series_id, s.gpu_index, m.metric;

UPDATE gpu_metric_series SET stats_version = 1
WHERE id IN (SELECT series_id FROM gpu_metric_gpu_stats);
