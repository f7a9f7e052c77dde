package store

// qAuditLedger lists the ingests naming any of the runs $2 of repo $1, as
// source or merge run, oldest first.
const qAuditLedger = `
SELECT id, github_run_id, coalesce(merge_run_id, 0), status, coalesce(error, '')
FROM ingests
WHERE repo = $1 AND (github_run_id = ANY($2) OR merge_run_id = ANY($2))
ORDER BY id`

// qLedgerRunsCreated lists the runs created in a window that the ledger
// holds a successful ingest of, with their creation time.
const qLedgerRunsCreated = `
SELECT DISTINCT ON (w.github_run_id) w.github_run_id, w.created_at
FROM workflow_runs w
WHERE lower(w.repo) = lower($1) AND w.created_at >= $2 AND w.created_at <= $3
  AND EXISTS (SELECT 1 FROM ingests i WHERE lower(i.repo) = lower($1) AND i.github_run_id = w.github_run_id
                                         AND i.status IN ('succeeded', 'completed_with_failures'))
ORDER BY w.github_run_id, w.run_attempt DESC`
