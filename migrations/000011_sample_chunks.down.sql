-- Back to one row per sample: the view's rows become the table's.
CREATE TABLE gpu_metric_samples_rows (
    series_id       bigint      NOT NULL,
    gpu_index       smallint    NOT NULL,
    sampled_at      timestamptz NOT NULL,
    power_w         real,
    temperature_c   real,
    sm_clock_mhz    real,
    mem_clock_mhz   real,
    gpu_util_pct    real,
    mem_util_pct    real,
    edge_temp_c     real,
    mem_temp_c      real,
    gfx_voltage_mv  real,
    soc_voltage_mv  real,
    mem_voltage_mv  real,
    fclk_mhz        real,
    socclk_mhz      real,
    mm_activity_pct real
);
INSERT INTO gpu_metric_samples_rows SELECT * FROM gpu_metric_samples ORDER BY series_id, gpu_index, sampled_at;
DROP VIEW gpu_metric_samples;
DROP TABLE gpu_metric_sample_chunks;
ALTER TABLE gpu_metric_samples_rows RENAME TO gpu_metric_samples;
ALTER TABLE gpu_metric_samples ADD CONSTRAINT gpu_metric_samples_pkey PRIMARY KEY (series_id, gpu_index, sampled_at);

CREATE OR REPLACE FUNCTION gpu_metric_series_delete_samples() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM gpu_metric_samples s USING old_series o WHERE s.series_id = o.id;
    RETURN NULL;
END $$;

CREATE TRIGGER gpu_metric_samples_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON gpu_metric_samples FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();
