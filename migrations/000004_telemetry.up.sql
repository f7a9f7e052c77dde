-- Telemetry: GPU-metric series (one per telemetry file, or per host of a
-- multinode DCGM samples.csv), their samples, and the link from benchmark
-- points to the series behind their published power.

CREATE TABLE gpu_metric_series (
    id                  bigserial   PRIMARY KEY,
    workflow_run_id     bigint      NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    artifact_name       text        NOT NULL CHECK (artifact_name <> ''),
    -- the artifact name without gpu_metrics_/power_audit_/agentic_: the
    -- suffix its benchmark artifact shares.
    config_key          text        NOT NULL,
    -- the file inside the artifact; a host of a DCGM bundle is
    -- 'LOGS/power/samples.csv#<hostname>'.
    file_name           text        NOT NULL CHECK (file_name <> ''),
    vendor              text        NOT NULL CHECK (vendor IN ('nvidia', 'amd')),
    format              text        NOT NULL CHECK (format IN ('nvidia-smi', 'amd-smi', 'dcgm')),
    hostname            text,
    -- sha256 of the CSV and the sidecars that change its reading (time zone).
    content_digest      bytea       NOT NULL,
    sample_count        integer     NOT NULL CHECK (sample_count >= 0),
    gpu_count           smallint    NOT NULL CHECK (gpu_count >= 0),
    started_at          timestamptz NOT NULL,
    ended_at            timestamptz NOT NULL,
    sample_interval_s   real,
    -- the window the facts are integrated over: the benchmark window when
    -- the row or its validation names one, else the series span.
    window_start        timestamptz NOT NULL,
    window_end          timestamptz NOT NULL,
    window_source       text        NOT NULL,
    energy_j            double precision,
    avg_power_w         double precision,
    avg_total_power_w   double precision,
    p50_power_w         real,
    p90_power_w         real,
    duplicate_samples   integer     NOT NULL DEFAULT 0,
    dropped_samples     integer     NOT NULL DEFAULT 0,
    ingest_id           bigint      NOT NULL REFERENCES ingests (id),
    ingested_at         timestamptz NOT NULL DEFAULT now(),
    CHECK (ended_at >= started_at),
    CONSTRAINT gpu_metric_series_unique UNIQUE (workflow_run_id, artifact_name, file_name)
);

-- Samples carry no foreign key: a per-row key check costs more than the
-- COPY itself at millions of rows. The store writes samples only for series
-- it inserts in the same transaction, and the trigger below removes them
-- with their series.
CREATE TABLE gpu_metric_samples (
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
    mm_activity_pct real,
    CONSTRAINT gpu_metric_samples_pkey PRIMARY KEY (series_id, gpu_index, sampled_at)
);

CREATE FUNCTION gpu_metric_series_delete_samples() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM gpu_metric_samples s USING old_series o WHERE s.series_id = o.id;
    RETURN NULL;
END $$;

CREATE TRIGGER gpu_metric_series_delete_samples
    AFTER DELETE ON gpu_metric_series
    REFERENCING OLD TABLE AS old_series
    FOR EACH STATEMENT EXECUTE FUNCTION gpu_metric_series_delete_samples();

CREATE TABLE benchmark_result_gpu_metrics (
    benchmark_result_id bigint NOT NULL REFERENCES benchmark_results (id) ON DELETE CASCADE,
    series_id           bigint NOT NULL REFERENCES gpu_metric_series (id) ON DELETE CASCADE,
    PRIMARY KEY (benchmark_result_id, series_id)
);
CREATE INDEX benchmark_result_gpu_metrics_series_idx ON benchmark_result_gpu_metrics (series_id);
