package store

// The statements of the refresh of latest_benchmarks, kept per curve
// (queries_curves.go), and of its state.

// qViewPresent tells whether the schema has the view's bookkeeping: the
// read-only `ingest status` reads a database migrated before 000006.
const qViewPresent = `SELECT to_regclass('public.materialized_view_marks') IS NOT NULL`

// qViewPending counts the changes the view does not show yet.
const qViewPending = `SELECT count(*) FROM materialized_view_marks WHERE view_name = 'latest_benchmarks'`

// qViewRefreshedCurves records a successful refresh ($1 ms).
const qViewRefreshedCurves = `
UPDATE materialized_view_state
SET refreshed_at = clock_timestamp(), last_attempt_at = clock_timestamp(), last_duration_ms = $1, last_error = NULL
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
