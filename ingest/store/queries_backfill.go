package store

// The SQL of backfill passes, their queue, and the ledger reads of
// `ingest status`.

// qOpenBackfill begins a pass unless one of the key is active. It returns
// nothing when one is: the caller then reads it with qActiveBackfill, in a
// statement of its own so that it sees a pass another worker just began.
const qOpenBackfill = `
INSERT INTO backfills (key, repo, params, reingest, ledger_mark)
VALUES ($1, $2, $3, $4, (SELECT coalesce(max(id), 0) FROM ingests))
ON CONFLICT (key) WHERE finished_at IS NULL DO NOTHING
RETURNING id, started_at, ledger_mark`

const qActiveBackfill = `
SELECT id, repo, reingest, started_at, ledger_mark FROM backfills
WHERE key = $1 AND finished_at IS NULL`

// qEnqueueBackfill adds runs to a pass; a run already queued keeps its
// state (a resumed pass never redoes a settled run).
const qEnqueueBackfill = `
INSERT INTO backfill_runs (backfill_id, github_run_id, run_attempt, run_created_at, tree, state, detail, finished_at)
SELECT $1, r.id, nullif(r.attempt, 0), r.created, nullif(r.tree, ''), r.state, nullif(r.detail, ''),
       CASE WHEN r.state = 'pending' THEN NULL ELSE now() END
FROM unnest($2::bigint[], $3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::text[])
     AS r(id, attempt, created, tree, state, detail)
ON CONFLICT (backfill_id, github_run_id) DO NOTHING
RETURNING state`

// qClaimBackfillRun takes the oldest pending run no other worker holds.
// The row stays locked until the claiming transaction ends: when the
// worker settles the run, or when its connection goes away.
const qClaimBackfillRun = `
SELECT github_run_id, coalesce(run_attempt, 0), run_created_at, coalesce(tree, '')
FROM backfill_runs
WHERE backfill_id = $1 AND state = 'pending'
ORDER BY run_created_at NULLS LAST, github_run_id
LIMIT 1
FOR UPDATE SKIP LOCKED`

// qClaimKeepalive makes the server notice a claiming worker whose machine
// vanished within about two minutes, releasing its claim. The claim is an
// idle transaction while its run is ingested: a server or database
// idle_in_transaction_session_timeout must not end it.
const qClaimKeepalive = `
SELECT set_config('tcp_keepalives_idle', '60', true),
       set_config('tcp_keepalives_interval', '10', true),
       set_config('tcp_keepalives_count', '6', true),
       set_config('idle_in_transaction_session_timeout', '0', true)`

// qClaimAlive is the claiming transaction's sign of life.
const qClaimAlive = `SELECT 1`

const qSettleBackfillRun = `
UPDATE backfill_runs SET
	state = $3, run_attempt = coalesce(nullif($4, 0), run_attempt), ingest_id = nullif($5::bigint, 0),
	ingest_status = nullif($6, ''), worker = nullif($7, ''), detail = nullif($8, ''),
	duration_ms = $9, finished_at = now()
WHERE backfill_id = $1 AND github_run_id = $2`

const qBackfillCounts = `
SELECT count(*),
       count(*) FILTER (WHERE state = 'pending'),
       count(*) FILTER (WHERE state = 'ingested'),
       count(*) FILTER (WHERE state = 'skipped'),
       count(*) FILTER (WHERE state = 'failed'),
       count(*) FILTER (WHERE state IN ('ingested', 'failed') AND worker IS NOT NULL)
FROM backfill_runs WHERE backfill_id = $1`

// qFinishBackfill closes a pass once nothing of it is pending.
const qFinishBackfill = `
UPDATE backfills SET finished_at = now()
WHERE id = $1 AND finished_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM backfill_runs WHERE backfill_id = $1 AND state = 'pending')`

const qBackfillFinished = `
SELECT EXISTS (SELECT 1 FROM backfills WHERE id = $1 AND finished_at IS NOT NULL)`

// qBackfillNoteworthy lists a pass's failed runs and the runs a worker
// skipped for a reason other than the routine one ($2 starts its detail).
const qBackfillNoteworthy = `
SELECT github_run_id, coalesce(run_attempt, 0), state, coalesce(ingest_id, 0), coalesce(ingest_status, ''),
       coalesce(worker, ''), coalesce(detail, ''), coalesce(duration_ms, 0), finished_at
FROM backfill_runs
WHERE backfill_id = $1
  AND (state = 'failed' OR (state = 'skipped' AND worker IS NOT NULL AND NOT starts_with(coalesce(detail, ''), $2)))
ORDER BY finished_at, github_run_id`

const qBackfillSettled = `
SELECT github_run_id, coalesce(run_attempt, 0), state, coalesce(ingest_id, 0), coalesce(ingest_status, ''),
       coalesce(worker, ''), coalesce(detail, ''), coalesce(duration_ms, 0), finished_at
FROM backfill_runs
WHERE backfill_id = $1 AND state = ANY($2)
ORDER BY finished_at, github_run_id`

// qBackfillRuns lists every run of a pass, pending ones too, oldest
// first, with its creation time.
const qBackfillRuns = `
SELECT github_run_id, coalesce(run_attempt, 0), state, coalesce(ingest_id, 0), coalesce(ingest_status, ''),
       coalesce(worker, ''), coalesce(detail, ''), coalesce(duration_ms, 0), finished_at, run_created_at
FROM backfill_runs
WHERE backfill_id = $1
ORDER BY run_created_at NULLS LAST, github_run_id`

// qLedgerHits finds, per run and attempt, the newest finished ingest that
// wrote the run (succeeded or completed with failures) after a ledger id.
const qLedgerHits = `
SELECT DISTINCT ON (github_run_id, run_attempt) github_run_id, run_attempt, id, status
FROM ingests
WHERE lower(repo) = lower($1) AND github_run_id = ANY($2) AND id > $3
  AND status IN ('succeeded', 'completed_with_failures')
ORDER BY github_run_id, run_attempt, id DESC`

// qRecentIngests lists ledger rows, newest first, of one run when $2 is
// set; with the pass that ingested each, if any.
const qRecentIngests = `
SELECT i.id, i.repo, i.github_run_id, i.run_attempt, coalesce(i.merge_run_id, 0), coalesce(i.merge_run_attempt, 0),
       i.status, i.target, i.started_at, i.finished_at, coalesce(i.duration_ms, 0), coalesce(i.error, ''),
       i.tool_version, i.summary,
       coalesce((SELECT b.backfill_id FROM backfill_runs b WHERE b.ingest_id = i.id LIMIT 1), 0)
FROM ingests i
WHERE ($2::bigint = 0 OR i.github_run_id = $2::bigint)
ORDER BY i.id DESC
LIMIT $1`

// qRecentIngestsNoBackfills is qRecentIngests on a schema from before
// migration 000005.
const qRecentIngestsNoBackfills = `
SELECT i.id, i.repo, i.github_run_id, i.run_attempt, coalesce(i.merge_run_id, 0), coalesce(i.merge_run_attempt, 0),
       i.status, i.target, i.started_at, i.finished_at, coalesce(i.duration_ms, 0), coalesce(i.error, ''),
       i.tool_version, i.summary, 0::bigint
FROM ingests i
WHERE ($2::bigint = 0 OR i.github_run_id = $2::bigint)
ORDER BY i.id DESC
LIMIT $1`

const qHasBackfills = `SELECT to_regclass('backfill_runs') IS NOT NULL AND to_regclass('backfills') IS NOT NULL`

// qRecentBackfills lists passes, unfinished first, then newest.
const qRecentBackfills = `
SELECT b.id, b.key, b.repo, b.reingest, b.ledger_mark, b.started_at, b.finished_at,
       count(r.github_run_id),
       count(r.github_run_id) FILTER (WHERE r.state = 'pending'),
       count(r.github_run_id) FILTER (WHERE r.state = 'ingested'),
       count(r.github_run_id) FILTER (WHERE r.state = 'skipped'),
       count(r.github_run_id) FILTER (WHERE r.state = 'failed'),
       count(r.github_run_id) FILTER (WHERE r.state IN ('ingested', 'failed') AND r.worker IS NOT NULL)
FROM backfills b LEFT JOIN backfill_runs r ON r.backfill_id = b.id
GROUP BY b.id
ORDER BY b.finished_at IS NULL DESC, b.id DESC
LIMIT $1`
