package store

// Every SQL statement of the telemetry stage (GPU-metric series, samples
// and their links to benchmark rows) lives in this file.

// qTelemetryStoredSeries lists the series a workflow run already has.
const qTelemetryStoredSeries = `
SELECT id, artifact_name, file_name, content_digest, vendor, gpu_count, window_source,
	energy_j, avg_power_w, avg_total_power_w, sample_count, csv_sha256
FROM gpu_metric_series
WHERE workflow_run_id = $1`

// qTelemetryRunPoints lists the run's benchmark rows with their identity
// and published power (a value that is not a JSON number reads as NULL),
// and their content digest, by which an adopted row finds the artifact
// this ingest read it from (RunTx.TelemetryState).
var qTelemetryRunPoints = `
SELECT b.id, b.content_digest, b.source_artifact, b.source_file, b.benchmark_type, b.isl, b.osl, b.conc,
	COALESCE(b.recipe_fingerprint, ''), c.hardware, c.model, c.framework, c.precision,
	` + jsonNum("b.metrics->'power_valid'") + `, ` + jsonNum("b.metrics->'power_metric_schema_version'") + `,
	` + jsonNum("b.metrics->'avg_power_w'") + `, ` + jsonNum("b.metrics->'avg_total_gpu_power_w'") + `,
	` + jsonNum("b.metrics->'total_gpu_energy_j'") + `, ` + jsonNum("b.metrics->'joules_per_output_token'") + `,
	` + jsonNum("b.power_audit->'window_start_unix'") + `, ` + jsonNum("b.power_audit->'window_end_unix'") + `,
	(` + jsonNum("b.power_audit->'sample_count'") + `)::bigint, (` + jsonNum("b.power_audit->'observed_gpu_count'") + `)::bigint
FROM benchmark_results b
JOIN configs c ON c.id = b.config_id
WHERE b.workflow_run_id = $1
ORDER BY b.id`

// jsonNum is the SQL of a jsonb expression read as float8 when it is a
// JSON number, else NULL.
func jsonNum(expr string) string {
	return "CASE WHEN jsonb_typeof(" + expr + ") = 'number' THEN (" + expr + ")::float8 END"
}

// qReserveSeriesIDs takes $1 ids from the series sequence, so samples can
// be sent before their series rows (the sequence named once, an InitPlan).
const qReserveSeriesIDs = `SELECT nextval((SELECT pg_get_serial_sequence('gpu_metric_series', 'id')::regclass))
FROM generate_series(1, $1)`

// sampleCopy is the COPY the samples are streamed by, in chunks (binary
// format).
const sampleCopy = `COPY gpu_metric_sample_chunks (series_id, gpu_index, chunk, sample_count, sampled_at,
	power_w, temperature_c, sm_clock_mhz, mem_clock_mhz, gpu_util_pct, mem_util_pct, edge_temp_c,
	mem_temp_c, gfx_voltage_mv, soc_voltage_mv, mem_voltage_mv, fclk_mhz, socclk_mhz, mm_activity_pct)
FROM STDIN (FORMAT binary)`

// qDeleteSeries removes series whose file changed; their samples go with
// them (trigger) and their links by cascade.
const qDeleteSeries = `DELETE FROM gpu_metric_series WHERE id = ANY($1::bigint[])`

// qInsertSeries writes the new series rows given as parallel arrays.
const qInsertSeries = `
INSERT INTO gpu_metric_series (id, workflow_run_id, artifact_name, config_key, file_name, vendor, format,
	hostname, content_digest, sample_count, gpu_count, started_at, ended_at, sample_interval_s,
	window_start, window_end, window_source, energy_j, avg_power_w, avg_total_power_w,
	p50_power_w, p90_power_w, duplicate_samples, dropped_samples, ingest_id, csv_sha256, sidecars,
	stats_version)
SELECT u.id, $1, u.artifact, u.config_key, u.file, u.vendor, u.format, NULLIF(u.host, ''), u.digest,
	u.samples, u.gpus, u.started, u.ended, NULLIF(u.interval_s, 0), u.ws, u.we, u.wsource,
	u.energy, u.avg, u.avg_total, u.p50, u.p90, u.dups, u.dropped, $2, u.csv_sha256, u.sidecars::jsonb,
	$28
FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
	$10::bytea[], $11::int[], $12::smallint[], $13::timestamptz[], $14::timestamptz[], $15::real[],
	$16::timestamptz[], $17::timestamptz[], $18::text[], $19::float8[], $20::float8[], $21::float8[],
	$22::real[], $23::real[], $24::int[], $25::int[], $26::text[], $27::text[])
	AS u(id, artifact, config_key, file, vendor, format, host, digest, samples, gpus, started, ended,
		interval_s, ws, we, wsource, energy, avg, avg_total, p50, p90, dups, dropped, csv_sha256, sidecars)`

// qInsertGPUStats writes the per-GPU digests of the new series, given as
// parallel arrays (metric is the sample column's name).
const qInsertGPUStats = `
INSERT INTO gpu_metric_gpu_stats (series_id, gpu_index, metric, sample_count, min_value, max_value,
	mean_value, median_value, p95_value, p99_value, stddev_value)
SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::int[], $5::real[], $6::real[],
	$7::real[], $8::real[], $9::real[], $10::real[], $11::real[])`

// qInsertLinks ties benchmark rows to series; an existing link is kept.
const qInsertLinks = `
INSERT INTO benchmark_result_gpu_metrics (benchmark_result_id, series_id)
SELECT * FROM unnest($1::bigint[], $2::bigint[])
ON CONFLICT DO NOTHING`

// qExportAttempt resolves the attempt to export: the given one, or the
// newest attempt of the run that has series.
const qExportAttempt = `
SELECT COALESCE(max(w.run_attempt), 0) FROM workflow_runs w
WHERE w.github_run_id = $1 AND ($2 = 0 OR w.run_attempt = $2)
	AND EXISTS (SELECT 1 FROM gpu_metric_series m WHERE m.workflow_run_id = w.id)`

// qExportSeries lists the series of one workflow run attempt.
const qExportSeries = `
SELECT m.id, m.artifact_name, m.file_name, COALESCE(m.hostname, '')
FROM gpu_metric_series m
JOIN workflow_runs w ON w.id = m.workflow_run_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2`

// qExportChunks reads the sample chunks of one workflow run attempt in key
// order (series, GPU, chunk).
const qExportChunks = `
SELECT c.series_id, c.gpu_index, c.sampled_at,
	c.power_w, c.temperature_c, c.sm_clock_mhz, c.mem_clock_mhz, c.gpu_util_pct, c.mem_util_pct,
	c.edge_temp_c, c.mem_temp_c, c.gfx_voltage_mv, c.soc_voltage_mv, c.mem_voltage_mv,
	c.fclk_mhz, c.socclk_mhz, c.mm_activity_pct
FROM gpu_metric_sample_chunks c
WHERE c.series_id IN (
	SELECT m.id FROM gpu_metric_series m JOIN workflow_runs w ON w.id = m.workflow_run_id
	WHERE w.github_run_id = $1 AND w.run_attempt = $2)
ORDER BY c.series_id, c.gpu_index, c.chunk`
