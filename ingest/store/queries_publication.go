package store

// qStagedIngest finds the newest finished ingest of a source run into the
// target $3 (the staged ingest a promotion compares with): its id, the
// tree digest of its publication section and its artifact records.
const qStagedIngest = `
SELECT id, coalesce(summary->'publication'->>'treeDigest', ''), artifacts::text
FROM ingests
WHERE repo = $1 AND github_run_id = $2 AND target = $3 AND status IN ('succeeded', 'completed_with_failures')
ORDER BY id DESC LIMIT 1`
