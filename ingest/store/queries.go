package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Every SQL statement the store runs lives in this file.

// configColumns is the configs natural key (schema.ConfigKeyColumns).
var configColumns = strings.Join(schema.ConfigKeyColumns(), ", ")

// configColumnsOf is the configs natural key as columns of alias, in the
// order of schema.Config.KeyFields.
func configColumnsOf(alias string) string {
	return alias + "." + strings.Join(schema.ConfigKeyColumns(), ", "+alias+".")
}

// qWorkMem lets the run's ranking sort in memory rather than on disk.
const qWorkMem = `SET LOCAL work_mem = '64MB'`

// qTryLockRun and qLockRun take the advisory lock that serialises ingests
// of one source run: a second ingest waits for the first to commit, then
// finds its rows and reports duplicates. The try never waits; the wait
// runs in slices (qLockWaitSlice) so that it can be logged.
const (
	qTryLockRun = `SELECT pg_try_advisory_xact_lock(` + RunLockKey + `)`
	qLockRun    = `SELECT pg_advisory_xact_lock(` + RunLockKey + `)`
)

// RunLockKey is the SQL expression of the advisory lock key of source run
// $1. Tests that hold a run's lock from another session take it with this
// key, so that they hold the very lock an ingest waits on.
const RunLockKey = `hashtextextended('ingest-run:' || $1::bigint, 0)`

// A slice of the wait for the run's lock runs in a savepoint with its own
// lock_timeout ($1, milliseconds): when the slice ends without the lock,
// rolling back to the savepoint undoes the error and the setting; when it
// gets the lock, the release keeps it and qRestoreLockTimeout puts the
// configured timeout back.
const (
	qLockWaitSavepoint  = `SAVEPOINT ingest_run_lock`
	qSetLockTimeout     = `SELECT set_config('lock_timeout', $1, true)`
	qLockWaitRollback   = `ROLLBACK TO SAVEPOINT ingest_run_lock`
	qLockWaitRelease    = `RELEASE SAVEPOINT ingest_run_lock`
	qRestoreLockTimeout = qSetLockTimeout
)

// qRunLockHolders names the sessions holding the advisory locks of the
// runs $1 (a bigint key shows in pg_locks as classid, the high half, and
// objid, the low half, with objsubid 1), with each holder's role and
// whether that role may write workflow_runs: a writer is an ingest or an
// apply to wait for, any other role (the dashboard's reader) has no
// business holding the lock. Non-writers come first, then by run.
var qRunLockHolders = `
WITH k AS (SELECT r.id, ` + strings.ReplaceAll(RunLockKey, "$1::bigint", "r.id") + ` AS key FROM unnest($1::bigint[]) AS r(id))
SELECT k.id, l.pid, coalesce(a.application_name, ''), coalesce(a.usename::text, ''),
	a.usesysid IS NULL OR has_table_privilege(a.usesysid, 'workflow_runs', 'INSERT')
FROM pg_locks l
JOIN k ON l.classid::bigint = (k.key >> 32) & 4294967295 AND l.objid::bigint = k.key & 4294967295
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.pid <> pg_backend_pid()
ORDER BY 5, 1, 2`

// qUpsertWorkflowRun writes the run row. Unknown values (NULL) never erase
// known ones, and a fallback name or date never replaces a real one.
const qUpsertWorkflowRun = `
INSERT INTO workflow_runs AS w (
	repo, github_run_id, run_attempt, name, name_is_fallback, event, status, conclusion,
	head_sha, head_branch, html_url, created_at, created_at_is_fallback, run_started_at, date)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ($12 AT TIME ZONE 'UTC')::date)
ON CONFLICT ON CONSTRAINT workflow_runs_natural_key DO UPDATE SET
	repo = CASE WHEN EXCLUDED.repo <> '' THEN EXCLUDED.repo ELSE w.repo END,
	name = CASE WHEN EXCLUDED.name_is_fallback THEN w.name ELSE EXCLUDED.name END,
	name_is_fallback = w.name_is_fallback AND EXCLUDED.name_is_fallback,
	event = COALESCE(EXCLUDED.event, w.event),
	status = COALESCE(EXCLUDED.status, w.status),
	conclusion = COALESCE(EXCLUDED.conclusion, w.conclusion),
	head_sha = COALESCE(EXCLUDED.head_sha, w.head_sha),
	head_branch = COALESCE(EXCLUDED.head_branch, w.head_branch),
	html_url = COALESCE(EXCLUDED.html_url, w.html_url),
	created_at = CASE WHEN EXCLUDED.created_at_is_fallback THEN w.created_at ELSE EXCLUDED.created_at END,
	date = CASE WHEN EXCLUDED.created_at_is_fallback THEN w.date ELSE EXCLUDED.date END,
	created_at_is_fallback = w.created_at_is_fallback AND EXCLUDED.created_at_is_fallback,
	run_started_at = COALESCE(EXCLUDED.run_started_at, w.run_started_at)
RETURNING id, to_char(date, 'YYYY-MM-DD'), conclusion IS NULL`

const qInsertLedgerRunning = `
INSERT INTO ingests (repo, github_run_id, run_attempt, merge_run_id, merge_run_attempt,
	workflow_run_id, status, target, started_at, tool_version)
VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9)
RETURNING id`

// qFastToast makes this transaction compress long values (the staging
// tables' rows, then what is copied from them) with lz4 where the server
// has it: pglz is a large share of the server's time in the staging COPY
// (docs/performance.md, "Current figures"). Values keep the method they were compressed
// with, and both read the same (as migration 9 chose for the ledger). A
// server without lz4 keeps its default; the statement cannot fail on it.
const qFastToast = `
SELECT set_config('default_toast_compression', 'lz4', true)
FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)`

const qCreateStaging = `
CREATE TEMP TABLE stage_benchmark (
	seq integer NOT NULL,
	point_key bytea NOT NULL,
	is_aggregate boolean NOT NULL,
	attempt_rank integer NOT NULL,
	hardware text NOT NULL, framework text NOT NULL, model text NOT NULL, precision text NOT NULL,
	spec_method text NOT NULL, disagg boolean NOT NULL, is_multinode boolean NOT NULL,
	prefill_tp smallint NOT NULL, prefill_ep smallint NOT NULL, prefill_dp_attention boolean NOT NULL,
	prefill_num_workers smallint NOT NULL, decode_tp smallint NOT NULL, decode_ep smallint NOT NULL,
	decode_dp_attention boolean NOT NULL, decode_num_workers smallint NOT NULL,
	num_prefill_gpu smallint NOT NULL, num_decode_gpu smallint NOT NULL,
	benchmark_type text NOT NULL, isl integer, osl integer, conc integer NOT NULL,
	offload_mode text NOT NULL, recipe_fingerprint text, image text,
	metrics jsonb, workers jsonb, power_invalid_reasons jsonb, power_audit jsonb,
	content_digest bytea NOT NULL, unchanged boolean NOT NULL,
	source_artifact text NOT NULL, source_artifact_id bigint, source_file text NOT NULL, source_row integer NOT NULL,
	values_known boolean NOT NULL, tput_per_gpu float8, output_tput_per_gpu float8, median_intvty float8,
	p90_e2el float8, median_ttft float8, kv_transfer_lib text
) ON COMMIT DROP`

// qCreatePointValues creates the table the benchmark inserts fill with the
// five values latest_benchmark_points keeps of each row they write (see
// qCapturePointValues). A run's transaction creates it as it begins; the
// curve update's scratch (qCurveScratch) creates it too, for a refresh
// outside a run, where it stays empty.
const qCreatePointValues = `
CREATE TEMP TABLE IF NOT EXISTS written_point_values (
	result_id bigint PRIMARY KEY, row_ctid tid NOT NULL,
	tput_per_gpu float8, output_tput_per_gpu float8, median_intvty float8, p90_e2el float8, median_ttft float8
) ON COMMIT DROP`

// qCapturePointValues, a part of both benchmark inserts (ins: the written
// rows' id, ctid and content digest; winners: the staged winners), keeps
// the five values the stager read from each written row's metrics, with
// the row version they belong to (its ctid): the curve update takes them
// instead of opening the row's jsonb, for as long as that version is the
// row's (an update later in the transaction, an AgentX row's server
// metrics, moves the row to a new ctid, and the update reads its jsonb).
// A winner's content digest is its own (it hashes the point key), so the
// join gives each written row one staged row.
const qCapturePointValues = `
	INSERT INTO written_point_values
	SELECT i.id, i.ctid, r.tput_per_gpu, r.output_tput_per_gpu, r.median_intvty, r.p90_e2el, r.median_ttft
	FROM ins i JOIN winners r ON r.content_digest = i.content_digest
	WHERE r.values_known`

// qStagingTables are the scratch tables every run transaction creates as it
// begins.
var qStagingTables = []string{qCreateStaging, qCreatePointValues}

// qRunDigests lists the content digests of the rows a workflow run already
// has, so unchanged rows are staged without their values.
const qRunDigests = `
SELECT b.content_digest FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2`

// qAdoptedPoints lists the rows of a workflow run attempt that an adopt
// took over from the reference ingest, with what finds a point of ours
// among them (adoptedPoint): the config but its GPU counts, the point's
// key, and the recipe fingerprint.
var qAdoptedPoints = `
SELECT b.content_digest, c.hardware, c.framework, c.model, c.precision, c.spec_method, c.disagg, c.is_multinode,
	c.prefill_tp, c.prefill_ep, c.prefill_dp_attention, c.prefill_num_workers,
	c.decode_tp, c.decode_ep, c.decode_dp_attention, c.decode_num_workers,
	b.benchmark_type, b.isl, b.osl, b.conc, b.offload_mode, b.recipe_fingerprint
FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
JOIN configs c ON c.id = b.config_id
WHERE w.github_run_id = $1 AND w.run_attempt = $2 AND ` + adoptedRow("b")

// adoptedRow is the SQL condition that the benchmark row b (its alias) is
// one an adopt took over: its ingest is the adopt's ledger row. A rerun
// that matches it keeps its values and ingest (only its provenance is
// learned, qAdoptedProvenance), so the condition holds after the rerun.
func adoptedRow(b string) string {
	return `EXISTS (SELECT 1 FROM ingests g WHERE g.id = ` + b + `.ingest_id AND g.target = ` + adoptedTarget + `)`
}

// adoptedTarget is the ingests.target of an adopt's ledger row, as SQL.
const adoptedTarget = `'adopted'`

// qAdoptedProvenance gives the adopted rows that staged winners matched
// ($1 workflow run, $2 the winners' seq) the winner's provenance, which
// the reference did not keep: the telemetry stage finds a run's rows by
// their source artifact. Values, digest and ingest stay the adopt's.
const qAdoptedProvenance = `
UPDATE benchmark_results b SET source_artifact = r.source_artifact, source_artifact_id = r.source_artifact_id,
	source_file = r.source_file, source_row = r.source_row
FROM unnest($2::int[]) AS w (seq) JOIN stage_benchmark r ON r.seq = w.seq
WHERE b.workflow_run_id = $1 AND b.content_digest = r.content_digest
	AND (b.source_artifact, b.source_artifact_id, b.source_file, b.source_row)
		IS DISTINCT FROM (r.source_artifact, r.source_artifact_id, r.source_file, r.source_row)`

// stagingColumns is the COPY column order of stage_benchmark.
var stagingColumns = slices.Concat([]string{"seq", "point_key", "is_aggregate", "attempt_rank"}, schema.ConfigKeyColumns(), []string{
	"benchmark_type", "isl", "osl", "conc", "offload_mode", "recipe_fingerprint", "image",
	"metrics", "workers", "power_invalid_reasons", "power_audit",
	"content_digest", "unchanged",
	"source_artifact", "source_artifact_id", "source_file", "source_row",
	"values_known", "tput_per_gpu", "output_tput_per_gpu", "median_intvty", "p90_e2el", "median_ttft",
	"kv_transfer_lib",
})

// qInsertConfigs writes the run's distinct configs (runSets.configArgs).
var qInsertConfigs = `
INSERT INTO configs (` + configColumns + `)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::bool[],
	$8::smallint[], $9::smallint[], $10::bool[], $11::smallint[],
	$12::smallint[], $13::smallint[], $14::bool[], $15::smallint[],
	$16::smallint[], $17::smallint[])
ON CONFLICT ON CONSTRAINT configs_natural_key DO NOTHING`

// configKeyParams is the condition that the natural key of configs c is
// the parameters $first, $first+1, … in key order (schema.Config.KeyFields).
func configKeyParams(first int) string {
	cols := schema.ConfigKeyColumns()
	params := make([]string, len(cols))
	for i := range cols {
		params[i] = fmt.Sprintf("$%d", first+i)
	}
	return "(" + configColumnsOf("c") + ") = (" + strings.Join(params, ", ") + ")"
}

// configJoin joins configs c to the 17 config columns of the row alias:
// the one join on the config's natural key.
func configJoin(alias string) string {
	cols := schema.ConfigKeyColumns()
	left, right := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		left[i], right[i] = "c."+c, alias+"."+c
	}
	return "JOIN configs c ON (" + strings.Join(left, ", ") + ")\n\t\t= (" + strings.Join(right, ", ") + ")"
}

// benchmarkWriteColumns and benchmarkWriteValues are what both benchmark
// inserts write of a staged row r with its config c ($1 workflow run, $2
// date, $3 ingest).
const (
	benchmarkWriteColumns = `workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, offload_mode,
		recipe_fingerprint, image, metrics, workers, power_invalid_reasons, power_audit, content_digest,
		source_artifact, source_artifact_id, source_file, source_row, ingest_id, kv_transfer_lib`
	benchmarkWriteValues = `$1, c.id, r.benchmark_type, $2::date, r.isl, r.osl, r.conc, r.offload_mode,
		r.recipe_fingerprint, r.image, r.metrics, r.workers, r.power_invalid_reasons, r.power_audit, r.content_digest,
		r.source_artifact, r.source_artifact_id, r.source_file, r.source_row, $3, r.kv_transfer_lib`
)

// qUpsertBenchmarks writes the winners the benchmark stage ranked while
// they were staged ($4: their seq in point-key order, the order ids are
// given in; see benchmarks.Winners), except those staged unchanged (their
// digest is stored: duplicates). A winner whose digest differs from its stored row
// refreshes it (counted as updated) and keeps its row id. A rerun
// therefore changes nothing. It returns how many rows were inserted and
// updated.
var qUpsertBenchmarks = `
WITH ins AS (
	INSERT INTO benchmark_results AS b (` + benchmarkWriteColumns + `)
	SELECT ` + benchmarkWriteValues + `
	FROM unnest($4::int[]) WITH ORDINALITY AS w (seq, ord)
	JOIN stage_benchmark r ON r.seq = w.seq
	` + configJoin("r") + `
	ORDER BY w.ord
	ON CONFLICT ON CONSTRAINT benchmark_results_natural_key DO UPDATE SET
		date = EXCLUDED.date, image = EXCLUDED.image, metrics = EXCLUDED.metrics,
		workers = EXCLUDED.workers, power_invalid_reasons = EXCLUDED.power_invalid_reasons,
		power_audit = EXCLUDED.power_audit, content_digest = EXCLUDED.content_digest,
		source_artifact = EXCLUDED.source_artifact, source_artifact_id = EXCLUDED.source_artifact_id,
		source_file = EXCLUDED.source_file, source_row = EXCLUDED.source_row, ingest_id = EXCLUDED.ingest_id,
		kv_transfer_lib = EXCLUDED.kv_transfer_lib
	WHERE b.content_digest <> EXCLUDED.content_digest
	RETURNING b.id, b.ctid, b.content_digest, (xmax = 0) AS inserted
), winners AS (
	SELECT r.* FROM unnest($4::int[]) AS w (seq) JOIN stage_benchmark r ON r.seq = w.seq
), captured AS (` + qCapturePointValues + `
)
SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM ins`

// qInsertBenchmarks writes the winners of a run that has no rows yet (none
// can conflict: the run's lock is held), without the speculative
// insertion of ON CONFLICT, and without joining or sorting the wide staged
// rows: $4 gives each staged row's rank among the winners in point-key
// order (indexed by seq, from 1; 0 for a row not written) and $5 their
// count; the rows take ids drawn in that order, so ids are in point-key
// order as qUpsertBenchmarks gives them.
var qInsertBenchmarks = `
WITH ids AS MATERIALIZED (
	-- the sequence named once (an InitPlan), not once per id
	SELECT array_agg(nextval((SELECT pg_get_serial_sequence('benchmark_results', 'id')::regclass)) ORDER BY g) AS id
	FROM generate_series(1, $5::int) AS g
), ins AS (
	INSERT INTO benchmark_results AS b (id, ` + benchmarkWriteColumns + `)
	SELECT (SELECT id FROM ids)[k.rank], ` + benchmarkWriteValues + `
	FROM stage_benchmark r
	CROSS JOIN LATERAL (SELECT ($4::int[])[r.seq + 1] AS rank) k
	` + configJoin("r") + `
	WHERE k.rank > 0
	RETURNING b.id, b.ctid, b.content_digest, (xmax = 0) AS inserted
), winners AS (
	SELECT r.* FROM stage_benchmark r WHERE ($4::int[])[r.seq + 1] > 0
), captured AS (` + qCapturePointValues + `
)
SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM ins`

// qInsertAvailability writes the run's distinct availability entries
// (runSets.availabilityArgs) on the run's date ($1).
const qInsertAvailability = `
INSERT INTO availability (model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type, date)
SELECT model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type, $1::date
FROM unnest($2::text[], $3::integer[], $4::integer[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[])
	AS a(model, isl, osl, precision, hardware, framework, spec_method, disagg, benchmark_type)
ON CONFLICT ON CONSTRAINT availability_natural_key DO NOTHING`

// qUpsertRunStats writes run-stats rows given as parallel arrays. A row
// adopted from the reference ingest (source_artifact 'adopted', keyed by
// the GPU: cluster = hardware) gives way to the run's own rows of that GPU,
// one per cluster; a row written for a GPU the reference had stored is a
// duplicate, not new.
const qUpsertRunStats = `
WITH src AS (
	SELECT * FROM unnest($3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[])
		AS u(cluster, hardware, n_success, total, source_artifact, source_file)
), adopted AS (
	DELETE FROM run_stats r
	WHERE r.workflow_run_id = $1 AND r.source_artifact = 'adopted'
		AND r.hardware IN (SELECT hardware FROM src) AND r.cluster NOT IN (SELECT cluster FROM src)
	RETURNING r.hardware
), ins AS (
	INSERT INTO run_stats AS r (workflow_run_id, date, cluster, hardware, n_success, total,
		source_artifact, source_file, ingest_id)
	SELECT $1, $2::date, cluster, hardware, n_success, total, source_artifact, source_file, $9 FROM src
	ON CONFLICT ON CONSTRAINT run_stats_natural_key DO UPDATE SET
		date = EXCLUDED.date, hardware = EXCLUDED.hardware, n_success = EXCLUDED.n_success,
		total = EXCLUDED.total, source_artifact = EXCLUDED.source_artifact,
		source_file = EXCLUDED.source_file, ingest_id = EXCLUDED.ingest_id
	WHERE (r.date, r.hardware, r.n_success, r.total) IS DISTINCT FROM
		(EXCLUDED.date, EXCLUDED.hardware, EXCLUDED.n_success, EXCLUDED.total)
	RETURNING (xmax = 0) AS inserted, r.hardware
)
SELECT (SELECT count(*) FROM src),
	(SELECT count(*) FROM ins WHERE inserted AND ins.hardware NOT IN (SELECT hardware FROM adopted))`

// qGenericPlan makes the rest of the transaction (the ledger row's
// update, megabytes of parameters on a large run) use generic plans: a
// custom plan copies every parameter value into the plan, twice, before
// anything is written.
const qGenericPlan = `SET LOCAL plan_cache_mode = force_generic_plan`

const qFinishLedger = `
UPDATE ingests SET status = $2, finished_at = $3, duration_ms = $4, summary = $5, artifacts = $6, error = $7,
	input_digest = $8, input_files = $9, data_xact = pg_current_xact_id(), data_snapshot = $10::pg_snapshot
WHERE id = $1`

// qInsertLedgerOutcome is the ledger row of an ingest that wrote nothing
// of its run ($14: aborted or purged), in a transaction of its own.
const qInsertLedgerOutcome = `
INSERT INTO ingests (repo, github_run_id, run_attempt, merge_run_id, merge_run_attempt,
	status, target, started_at, finished_at, duration_ms, error, summary, artifacts, tool_version)
VALUES ($1, $2, $3, $4, $5, $14, $6, $7, $8, $9, $10, $11, $12, $13)
RETURNING id`

// qLatestSummary finds the summary of the newest finished ingest of a run
// (any attempt when $2 is 0).
const qLatestSummary = `
SELECT summary FROM ingests
WHERE github_run_id = $1 AND ($2 = 0 OR run_attempt = $2) AND summary IS NOT NULL
ORDER BY id DESC LIMIT 1`
