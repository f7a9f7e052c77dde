package store

// SQL of the run-override ledger applied to stored data (overrides.go).

import "strings"

// qOverrideLockRuns takes the advisory lock of every run the plan names
// ($1), in run id order, before the apply touches a row: an ingest takes
// its run's lock (RunLockKey) before it writes, so an apply and an ingest
// of one run wait for each other at that lock instead of taking row locks
// in opposite orders (a deadlock). The order keeps two applies from
// deadlocking on the locks themselves.
var qOverrideLockRuns = `
SELECT count(pg_advisory_xact_lock(` + strings.ReplaceAll(RunLockKey, "$1::bigint", "r.id") + `))
FROM (SELECT DISTINCT id FROM unnest($1::bigint[]) AS u(id) ORDER BY id) r`

// qOverrideConclusion corrects a run's conclusion on every attempt.
const qOverrideConclusion = `
UPDATE workflow_runs SET conclusion = $2 WHERE github_run_id = $1 AND conclusion IS DISTINCT FROM $2`

// qOverrideRunRows are the workflow_runs rows of a purged run ($2 empty:
// every attempt).
const qOverrideRunRows = `
SELECT id FROM workflow_runs WHERE github_run_id = $1 AND (cardinality($2::int[]) = 0 OR run_attempt = ANY($2::int[]))
ORDER BY id`

// qOverrideUnknownAttempts are the attempts ($2; empty: the run as a
// whole, returned as 0) of run $1 that are neither stored nor in the
// ledger: a run purged earlier keeps its ingests, so only an id that was
// never here is returned.
const qOverrideUnknownAttempts = `
SELECT a::bigint FROM unnest(CASE WHEN cardinality($2::int[]) = 0 THEN '{0}'::int[] ELSE $2::int[] END) AS a
WHERE NOT EXISTS (SELECT 1 FROM workflow_runs w WHERE w.github_run_id = $1 AND (a = 0 OR w.run_attempt = a))
	AND NOT EXISTS (SELECT 1 FROM ingests i WHERE i.github_run_id = $1 AND (a = 0 OR i.run_attempt = a))
ORDER BY a`

const qOverrideRunResults = `SELECT id FROM benchmark_results WHERE workflow_run_id = ANY($1::bigint[]) ORDER BY id`

// qOverridePointRows are the stored rows of one point of a run ($2 = 0:
// every attempt), matched on the full config and point identity.
var qOverridePointRows = `
SELECT b.id FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
JOIN configs c ON c.id = b.config_id
WHERE w.github_run_id = $1 AND ($2::int = 0 OR w.run_attempt = $2::int)
	AND ` + configKeyParams(3) + `
	AND b.benchmark_type = $20 AND b.isl IS NOT DISTINCT FROM $21::int AND b.osl IS NOT DISTINCT FROM $22::int
	AND b.conc = $23 AND b.offload_mode = $24 AND b.recipe_fingerprint IS NOT DISTINCT FROM $25::text
	AND ($26::text = '' OR coalesce(w.head_sha, '') IN ('', $26::text))
ORDER BY b.id`

// The dependents of benchmark rows about to be deleted: their server logs,
// trace sidecars, telemetry series and availability keys.
const qOverrideDependents = `
SELECT
	coalesce((SELECT array_agg(DISTINCT server_log_id) FROM benchmark_results WHERE id = ANY($1::bigint[]) AND server_log_id IS NOT NULL), '{}'),
	coalesce((SELECT array_agg(DISTINCT trace_replay_id) FROM benchmark_results WHERE id = ANY($1::bigint[]) AND trace_replay_id IS NOT NULL), '{}'),
	coalesce((SELECT array_agg(DISTINCT series_id) FROM benchmark_result_gpu_metrics WHERE benchmark_result_id = ANY($1::bigint[])), '{}')`

// qOverrideAvailabilityKeys are the availability keys of the rows.
const qOverrideAvailabilityKeys = `
CREATE TEMP TABLE override_availability ON COMMIT DROP AS
SELECT DISTINCT c.model, b.isl, b.osl, c.precision, c.hardware, c.framework, c.spec_method, c.disagg, b.benchmark_type, b.date
FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.id = ANY($1::bigint[])`

const qOverrideDeleteResults = `DELETE FROM benchmark_results WHERE id = ANY($1::bigint[])`

const qOverrideDeleteServerLogs = `
DELETE FROM server_logs l WHERE l.id = ANY($1::bigint[])
	AND NOT EXISTS (SELECT 1 FROM benchmark_results b WHERE b.server_log_id = l.id)`

const qOverrideDeleteSidecars = `
DELETE FROM agentic_trace_replay t WHERE t.id = ANY($1::bigint[])
	AND NOT EXISTS (SELECT 1 FROM benchmark_results b WHERE b.trace_replay_id = t.id)`

const qOverrideDeleteSeries = `
DELETE FROM gpu_metric_series s WHERE s.id = ANY($1::bigint[])
	AND NOT EXISTS (SELECT 1 FROM benchmark_result_gpu_metrics m WHERE m.series_id = s.id)`

// qOverrideDeleteAvailability removes the availability entries no stored
// row backs any more.
const qOverrideDeleteAvailability = `
WITH gone AS (
	DELETE FROM availability a USING override_availability k
	WHERE a.model = k.model AND a.isl IS NOT DISTINCT FROM k.isl AND a.osl IS NOT DISTINCT FROM k.osl
		AND a.precision = k.precision AND a.hardware = k.hardware AND a.framework = k.framework
		AND a.spec_method = k.spec_method AND a.disagg = k.disagg AND a.benchmark_type = k.benchmark_type AND a.date = k.date
		AND NOT EXISTS (SELECT 1 FROM benchmark_results b JOIN configs c ON c.id = b.config_id
			WHERE c.model = a.model AND b.isl IS NOT DISTINCT FROM a.isl AND b.osl IS NOT DISTINCT FROM a.osl
				AND c.precision = a.precision AND c.hardware = a.hardware AND c.framework = a.framework
				AND c.spec_method = a.spec_method AND c.disagg = a.disagg AND b.benchmark_type = a.benchmark_type AND b.date = a.date)
	RETURNING 1
)
SELECT count(*) FROM gone`

const qOverrideDropAvailability = `DROP TABLE IF EXISTS override_availability`

// The rows of the purged workflow runs themselves; the ledger keeps its
// ingests, unlinked.
const (
	qOverrideDeleteRunStats   = `DELETE FROM run_stats WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideDeleteEvals      = `DELETE FROM eval_results WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideDeleteChangelog  = `DELETE FROM changelog_entries WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideDeleteRunDataset = `DELETE FROM run_datasets WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideDeleteRunSeries  = `DELETE FROM gpu_metric_series WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideUnlinkIngests    = `UPDATE ingests SET workflow_run_id = NULL WHERE workflow_run_id = ANY($1::bigint[])`
	qOverrideDeleteRuns       = `DELETE FROM workflow_runs WHERE id = ANY($1::bigint[])`
)

// qOverrideRetireGPUPower removes the GPU power keys ($2) from the metrics
// and every worker object of the rows ($1) that hold any.
const qOverrideRetireGPUPower = `
UPDATE benchmark_results b SET
	metrics = b.metrics - $2::text[],
	workers = CASE WHEN jsonb_typeof(b.workers) = 'array' THEN (
		SELECT jsonb_agg(CASE WHEN jsonb_typeof(e) = 'object' THEN e - $2::text[] ELSE e END ORDER BY n)
		FROM jsonb_array_elements(b.workers) WITH ORDINALITY AS x(e, n)) ELSE b.workers END
WHERE b.id = ANY($1::bigint[]) AND (b.metrics ?| $2::text[] OR (jsonb_typeof(b.workers) = 'array' AND EXISTS (
	SELECT 1 FROM jsonb_array_elements(b.workers) AS e WHERE jsonb_typeof(e) = 'object' AND e ?| $2::text[])))`

// qRecordOverrideApply is the ledger entry of an apply.
const qRecordOverrideApply = `
INSERT INTO override_applications (tool_version, plan_digest, changed, result) VALUES ($1, $2, $3, $4) RETURNING id`

// qBackfillPointRows are the stored rows of one point of a run attempt
// under its source or its corrected offload mode ($24: both), with their
// offload mode and metrics.
var qBackfillPointRows = `
SELECT b.id, b.offload_mode, b.metrics::text FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
JOIN configs c ON c.id = b.config_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2
	AND ` + configKeyParams(3) + `
	AND b.benchmark_type = $20 AND b.isl IS NOT DISTINCT FROM $21::int AND b.osl IS NOT DISTINCT FROM $22::int
	AND b.conc = $23 AND b.offload_mode = ANY($24::text[]) AND b.recipe_fingerprint IS NOT DISTINCT FROM $25::text
ORDER BY b.id`

// qBackfillPoint writes a corrected point: its offload mode and metrics.
const qBackfillPoint = `UPDATE benchmark_results SET offload_mode = $2, metrics = $3::jsonb WHERE id = $1`

// qBackfillChangelogRows are the stored entries of one changelog of a run
// attempt, in entry order, with their workflow run.
const qBackfillChangelogRows = `
SELECT e.id, w.id, e.config_keys, e.description, e.pr_link, e.append_only, w.append_only
FROM changelog_entries e JOIN workflow_runs w ON w.id = e.workflow_run_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2 AND e.base_ref = $3 AND e.head_ref = $4
ORDER BY e.entry_index`

// qBackfillChangelogEntry writes a corrected changelog entry.
const qBackfillChangelogEntry = `
UPDATE changelog_entries SET config_keys = $2, description = $3, pr_link = $4, append_only = $5 WHERE id = $1`

// qOverrideRetiredSeries are the stored AMD series of the retired source
// ($4: the CSV's hex sha256) that still hold power: the run, the entry's
// attempt, and its head commit where the run has one.
const qOverrideRetiredSeries = `
SELECT s.id FROM gpu_metric_series s JOIN workflow_runs w ON w.id = s.workflow_run_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2 AND coalesce(w.head_sha, '') IN ('', $3::text)
	AND s.vendor = 'amd' AND s.csv_sha256 = $4
	AND (s.energy_j IS NOT NULL OR s.avg_power_w IS NOT NULL OR s.avg_total_power_w IS NOT NULL
		OR s.p50_power_w IS NOT NULL OR s.p90_power_w IS NOT NULL
		OR EXISTS (SELECT 1 FROM gpu_metric_sample_chunks c WHERE c.series_id = s.id AND c.power_w IS NOT NULL)
		OR EXISTS (SELECT 1 FROM gpu_metric_gpu_stats g WHERE g.series_id = s.id AND g.metric = 'power_w'))
ORDER BY s.id`

// What a retired source's series lose: power samples, per-GPU power
// statistics, the series' power facts.
const (
	qOverrideRetireChunkPower  = `UPDATE gpu_metric_sample_chunks SET power_w = NULL WHERE series_id = ANY($1::bigint[]) AND power_w IS NOT NULL`
	qOverrideRetireStatsPower  = `DELETE FROM gpu_metric_gpu_stats WHERE series_id = ANY($1::bigint[]) AND metric = 'power_w'`
	qOverrideRetireSeriesPower = `
UPDATE gpu_metric_series SET energy_j = NULL, avg_power_w = NULL, avg_total_power_w = NULL, p50_power_w = NULL, p90_power_w = NULL
WHERE id = ANY($1::bigint[])`
)
