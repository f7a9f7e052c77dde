package store

// The statements of the refresh of latest_benchmarks: per curve since
// migration 000013 (queries_curves.go), a materialized view before it
// (migration 000006).

// qViewPresent tells whether the schema has the view's bookkeeping (a
// database migrated before 000006 by a command that never migrates).
const qViewPresent = `SELECT to_regclass('public.materialized_view_marks') IS NOT NULL`

// qViewPending counts the changes the view does not show yet.
const qViewPending = `SELECT count(*) FROM materialized_view_marks WHERE view_name = 'latest_benchmarks'`

// qViewRefreshedCurves records a successful refresh ($1 ms).
const qViewRefreshedCurves = `
UPDATE materialized_view_state
SET refreshed_at = clock_timestamp(), last_attempt_at = clock_timestamp(), last_duration_ms = $1, last_error = NULL
WHERE view_name = 'latest_benchmarks'`

// qViewMarks lists the marks of latest_benchmarks: the changes the view
// does not show yet.
const qViewMarks = `SELECT id FROM materialized_view_marks WHERE view_name = 'latest_benchmarks' ORDER BY id`

const qRefreshLatestBenchmarks = `REFRESH MATERIALIZED VIEW CONCURRENTLY latest_benchmarks`

// qViewPopulated tells whether latest_benchmarks has been populated (a
// view created WITH NO DATA has not, and cannot be read or refreshed
// concurrently).
const qViewPopulated = `SELECT ispopulated FROM pg_matviews WHERE schemaname = 'public' AND matviewname = 'latest_benchmarks'`

// qViewHasRows tells whether the populated view shows any row.
const qViewHasRows = `SELECT EXISTS (SELECT 1 FROM latest_benchmarks)`

// qRefreshLatestBenchmarksPlain refreshes an empty or never populated view:
// nobody reads rows it does not have, so the brief exclusive lock costs no
// reader anything, and it spares the concurrent refresh's diff against the
// old contents, most of a first load's refresh.
const qRefreshLatestBenchmarksPlain = `REFRESH MATERIALIZED VIEW latest_benchmarks`

// qViewRefreshed clears the marks the refresh saw and records its success.
const qViewRefreshed = `
WITH cleared AS (
	DELETE FROM materialized_view_marks WHERE id = ANY($1::bigint[])
)
UPDATE materialized_view_state
SET refreshed_at = now(), last_attempt_at = now(), last_duration_ms = $2, last_error = NULL
WHERE view_name = 'latest_benchmarks'`

// qViewRefreshFailed records a failed refresh; the marks stay.
const qViewRefreshFailed = `
UPDATE materialized_view_state
SET last_attempt_at = now(), last_duration_ms = $1, last_error = $2
WHERE view_name = 'latest_benchmarks'`

// qViewState is the state `ingest status` shows.
const qViewState = `
SELECT s.refreshed_at, s.last_attempt_at, s.last_duration_ms, s.last_error,
	count(m.id), min(m.marked_at),
	(SELECT count(*) FROM latest_benchmarks)
FROM materialized_view_state s
LEFT JOIN materialized_view_marks m ON m.view_name = s.view_name
WHERE s.view_name = 'latest_benchmarks'
GROUP BY s.view_name, s.refreshed_at, s.last_attempt_at, s.last_duration_ms, s.last_error`

// qLedgerAfterRefresh stores the summary of a committed ingest again once
// the refresh after its commit is known.
const qLedgerAfterRefresh = `UPDATE ingests SET summary = $2, status = $3 WHERE id = $1`
