package store

// The SQL of unchanged reruns: finding the newest finished ingest of a run
// with what a rerun compares, and recording a rerun answered from it.

// priorFinished is the newest finished ingest of a run ($1 repo, $2 run id,
// $3 attempt). Aborted ingests wrote nothing and do not count.
const priorFinished = `
SELECT p.* FROM ingests p
WHERE p.repo = $1 AND p.github_run_id = $2 AND p.run_attempt = $3
  AND p.status IN ('succeeded', 'completed_with_failures')
ORDER BY p.id DESC LIMIT 1`

// dataUnchangedSince is true when nothing that could change a rerun's
// outcome wrote a data table after the ingest's snapshot: a noted
// transaction the snapshot does not see is a later one (or one still in
// flight when the ingest finished). The ingest's own (p.data_xact) does
// not count, nor does an ingest of another run (a ledger row holding the
// transaction, of another run id): it inserts only its own rows and
// content-addressed ones (configs, texts, blobs) that this run's rows find
// stored either way, and updates or deletes only its own. Any other writer
// — an ingest of the same run under any attempt, a statement run by hand,
// a migration — does count.
const dataUnchangedSince = `(p.data_snapshot IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM data_changes c
    WHERE c.xact >= pg_snapshot_xmin(p.data_snapshot)
      AND c.xact <> p.data_xact
      AND NOT pg_visible_in_snapshot(c.xact, p.data_snapshot)
      AND NOT EXISTS (SELECT 1 FROM ingests o
                      WHERE o.data_xact = c.xact AND o.unchanged_since IS NULL
                        AND o.github_run_id <> p.github_run_id)))`

// inputFiles is the file index of ingest p. A rerun answered from the
// ledger whose file index was the one it was answered from stores none
// (qRecordUnchanged): its index is that of the first ingest up its
// unchanged_since chain that stores one.
const inputFiles = `coalesce(p.input_files, (
		WITH RECURSIVE up (files, since) AS (
			SELECT NULL::bytea, p.unchanged_since
			UNION ALL
			SELECT i.input_files, i.unchanged_since FROM up JOIN ingests i ON i.id = up.since WHERE up.files IS NULL
		)
		SELECT files FROM up WHERE files IS NOT NULL LIMIT 1))`

// qPriorIngest reads the prior ingest of a run, with its file index
// (inputFiles).
const qPriorIngest = `
SELECT p.id, p.input_digest, ` + dataUnchangedSince + `, p.summary,
	` + inputFiles + `
FROM (` + priorFinished + `) p`

// qNextIngestID takes the id of a ledger row written with its summary.
const qNextIngestID = `SELECT nextval(pg_get_serial_sequence('ingests', 'id'))`

// qRecordUnchanged records, as ledger row $16 (qNextIngestID), a rerun
// answered from ingest $14: a finished ledger row carrying that ingest's
// artifact records, input digest and data stamps, the rerun's summary ($11,
// holding its id) and the file index of its own digest ($15: files that
// were racy then may be indexed now; NULL when it is the one $14's
// resolves to, see qPriorIngest). It inserts nothing when $14 is no
// longer the run's newest finished ingest or the data changed since
// (another writer got there between the check and this statement).
const qRecordUnchanged = `
INSERT INTO ingests (id, repo, github_run_id, run_attempt, merge_run_id, merge_run_attempt,
    workflow_run_id, status, target, started_at, finished_at, duration_ms, summary, artifacts,
    tool_version, input_digest, input_files, data_xact, data_snapshot, unchanged_since)
SELECT $16, $1, $2, $3, $4, $5, p.workflow_run_id, $6, $7, $8, $9, $10,
    $11::text::json, p.artifacts, $12,
    p.input_digest, $15, p.data_xact, p.data_snapshot, p.id
FROM (` + priorFinished + `) p
WHERE p.id = $14 AND p.input_digest = $13 AND ` + dataUnchangedSince + `
RETURNING id`

// qDataSnapshot is the snapshot a run's outcome is computed against,
// taken once its lock is held (as text: pgx has no pg_snapshot type).
const qDataSnapshot = `SELECT pg_current_snapshot()::text`
