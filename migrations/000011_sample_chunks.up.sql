-- GPU-metric samples are stored in chunks: one row per run of up to 8192
-- consecutive samples of one GPU of a series, each column an array. A
-- per-sample row costs PostgreSQL a heap tuple, a primary-key entry and
-- about 200 bytes of WAL; a 2000-point sweep has millions of samples, and
-- inserting them row by row was most of its ingest. A chunk stores them
-- as arrays (lz4-compressed where the server has lz4).
--
-- The view gpu_metric_samples keeps the table's name, columns and rows:
-- one row per (series, GPU, time), unique, as before. The ingest dedupes
-- (GPU, time) within a series, first wins, before it writes a chunk.
--
-- A metric column is NULL when no sample of the chunk has that metric
-- (an NVIDIA series has no AMD voltages); the view reads it as NULL on
-- every row. Samples inside a chunk are in the order collected: time order
-- unless the collector's clock stepped back.
CREATE TABLE gpu_metric_sample_chunks (
    series_id       bigint        NOT NULL,
    gpu_index       smallint      NOT NULL,
    -- 0, 1, … per (series, GPU) in the order written
    chunk           integer       NOT NULL CHECK (chunk >= 0),
    sample_count    integer       NOT NULL CHECK (sample_count > 0),
    sampled_at      timestamptz[] NOT NULL
        CHECK (cardinality(sampled_at) = sample_count AND array_position(sampled_at, NULL) IS NULL),
    power_w         real[] CHECK (power_w IS NULL OR cardinality(power_w) = sample_count),
    temperature_c   real[] CHECK (temperature_c IS NULL OR cardinality(temperature_c) = sample_count),
    sm_clock_mhz    real[] CHECK (sm_clock_mhz IS NULL OR cardinality(sm_clock_mhz) = sample_count),
    mem_clock_mhz   real[] CHECK (mem_clock_mhz IS NULL OR cardinality(mem_clock_mhz) = sample_count),
    gpu_util_pct    real[] CHECK (gpu_util_pct IS NULL OR cardinality(gpu_util_pct) = sample_count),
    mem_util_pct    real[] CHECK (mem_util_pct IS NULL OR cardinality(mem_util_pct) = sample_count),
    edge_temp_c     real[] CHECK (edge_temp_c IS NULL OR cardinality(edge_temp_c) = sample_count),
    mem_temp_c      real[] CHECK (mem_temp_c IS NULL OR cardinality(mem_temp_c) = sample_count),
    gfx_voltage_mv  real[] CHECK (gfx_voltage_mv IS NULL OR cardinality(gfx_voltage_mv) = sample_count),
    soc_voltage_mv  real[] CHECK (soc_voltage_mv IS NULL OR cardinality(soc_voltage_mv) = sample_count),
    mem_voltage_mv  real[] CHECK (mem_voltage_mv IS NULL OR cardinality(mem_voltage_mv) = sample_count),
    fclk_mhz        real[] CHECK (fclk_mhz IS NULL OR cardinality(fclk_mhz) = sample_count),
    socclk_mhz      real[] CHECK (socclk_mhz IS NULL OR cardinality(socclk_mhz) = sample_count),
    mm_activity_pct real[] CHECK (mm_activity_pct IS NULL OR cardinality(mm_activity_pct) = sample_count),
    CONSTRAINT gpu_metric_sample_chunks_pkey PRIMARY KEY (series_id, gpu_index, chunk)
);

DO $$
DECLARE
    c text;
BEGIN
    FOREACH c IN ARRAY ARRAY['sampled_at', 'power_w', 'temperature_c', 'sm_clock_mhz', 'mem_clock_mhz',
        'gpu_util_pct', 'mem_util_pct', 'edge_temp_c', 'mem_temp_c', 'gfx_voltage_mv', 'soc_voltage_mv',
        'mem_voltage_mv', 'fclk_mhz', 'socclk_mhz', 'mm_activity_pct']
    LOOP
        EXECUTE format('ALTER TABLE gpu_metric_sample_chunks ALTER COLUMN %I SET COMPRESSION lz4', c);
    END LOOP;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: sample chunks keep pglz';
END $$;

-- Samples already stored move into chunks, in time order per GPU.
INSERT INTO gpu_metric_sample_chunks (series_id, gpu_index, chunk, sample_count, sampled_at,
    power_w, temperature_c, sm_clock_mhz, mem_clock_mhz, gpu_util_pct, mem_util_pct, edge_temp_c,
    mem_temp_c, gfx_voltage_mv, soc_voltage_mv, mem_voltage_mv, fclk_mhz, socclk_mhz, mm_activity_pct)
SELECT series_id, gpu_index, chunk, count(*), array_agg(sampled_at ORDER BY sampled_at),
    CASE WHEN count(power_w) > 0 THEN array_agg(power_w ORDER BY sampled_at) END,
    CASE WHEN count(temperature_c) > 0 THEN array_agg(temperature_c ORDER BY sampled_at) END,
    CASE WHEN count(sm_clock_mhz) > 0 THEN array_agg(sm_clock_mhz ORDER BY sampled_at) END,
    CASE WHEN count(mem_clock_mhz) > 0 THEN array_agg(mem_clock_mhz ORDER BY sampled_at) END,
    CASE WHEN count(gpu_util_pct) > 0 THEN array_agg(gpu_util_pct ORDER BY sampled_at) END,
    CASE WHEN count(mem_util_pct) > 0 THEN array_agg(mem_util_pct ORDER BY sampled_at) END,
    CASE WHEN count(edge_temp_c) > 0 THEN array_agg(edge_temp_c ORDER BY sampled_at) END,
    CASE WHEN count(mem_temp_c) > 0 THEN array_agg(mem_temp_c ORDER BY sampled_at) END,
    CASE WHEN count(gfx_voltage_mv) > 0 THEN array_agg(gfx_voltage_mv ORDER BY sampled_at) END,
    CASE WHEN count(soc_voltage_mv) > 0 THEN array_agg(soc_voltage_mv ORDER BY sampled_at) END,
    CASE WHEN count(mem_voltage_mv) > 0 THEN array_agg(mem_voltage_mv ORDER BY sampled_at) END,
    CASE WHEN count(fclk_mhz) > 0 THEN array_agg(fclk_mhz ORDER BY sampled_at) END,
    CASE WHEN count(socclk_mhz) > 0 THEN array_agg(socclk_mhz ORDER BY sampled_at) END,
    CASE WHEN count(mm_activity_pct) > 0 THEN array_agg(mm_activity_pct ORDER BY sampled_at) END
FROM (
    SELECT s.*, ((row_number() OVER (PARTITION BY series_id, gpu_index ORDER BY sampled_at)) - 1) / 8192 AS chunk
    FROM gpu_metric_samples s
) s
GROUP BY series_id, gpu_index, chunk;

DROP TABLE gpu_metric_samples;

CREATE VIEW gpu_metric_samples AS
SELECT c.series_id, c.gpu_index, s.sampled_at,
    s.power_w, s.temperature_c, s.sm_clock_mhz, s.mem_clock_mhz, s.gpu_util_pct, s.mem_util_pct,
    s.edge_temp_c, s.mem_temp_c, s.gfx_voltage_mv, s.soc_voltage_mv, s.mem_voltage_mv,
    s.fclk_mhz, s.socclk_mhz, s.mm_activity_pct
FROM gpu_metric_sample_chunks c,
    unnest(c.sampled_at, c.power_w, c.temperature_c, c.sm_clock_mhz, c.mem_clock_mhz, c.gpu_util_pct,
        c.mem_util_pct, c.edge_temp_c, c.mem_temp_c, c.gfx_voltage_mv, c.soc_voltage_mv,
        c.mem_voltage_mv, c.fclk_mhz, c.socclk_mhz, c.mm_activity_pct)
    AS s(sampled_at, power_w, temperature_c, sm_clock_mhz, mem_clock_mhz, gpu_util_pct, mem_util_pct,
        edge_temp_c, mem_temp_c, gfx_voltage_mv, soc_voltage_mv, mem_voltage_mv, fclk_mhz, socclk_mhz,
        mm_activity_pct);

-- A series' chunks go with it (no foreign key, as for the samples before).
CREATE OR REPLACE FUNCTION gpu_metric_series_delete_samples() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM gpu_metric_sample_chunks c USING old_series o WHERE c.series_id = o.id;
    RETURN NULL;
END $$;

-- The unchanged-rerun check notes every writer of a data table (000010).
CREATE TRIGGER gpu_metric_sample_chunks_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON gpu_metric_sample_chunks FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();
