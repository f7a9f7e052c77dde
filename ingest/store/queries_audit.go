package store

// qAuditLedger lists the ingests naming any of the runs $2 of repo $1, as
// source or merge run, oldest first.
const qAuditLedger = `
SELECT id, github_run_id, coalesce(merge_run_id, 0), status, coalesce(error, '')
FROM ingests
WHERE repo = $1 AND (github_run_id = ANY($2) OR merge_run_id = ANY($2))
ORDER BY id`
