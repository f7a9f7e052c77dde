package store

// qStagedIngest finds the newest finished ingest of a source run into the
// target $3 (the staged ingest a promotion compares with), of attempt $4
// when that attempt was staged: its id, run attempt, the tree digest and
// server of its publication section, its artifact records and its tree's
// file index (inputFiles).
const qStagedIngest = `
SELECT p.id, p.run_attempt, coalesce(p.summary->'publication'->>'treeDigest', ''),
	coalesce(p.summary->'publication'->>'server', ''), p.artifacts::text,
	` + inputFiles + `
FROM (
	SELECT * FROM ingests
	WHERE repo = $1 AND github_run_id = $2 AND target = $3 AND status IN ('succeeded', 'completed_with_failures')
	ORDER BY run_attempt = $4 DESC, id DESC LIMIT 1) p`

// qServerIdentity is what the server says it is (schema.ServerIdentity),
// readable by any role: the database, the port (the socket's when the
// connection is not over TCP), the postmaster's start time, and whether
// this role may read the system identifier (qSystemIdentifier).
const qServerIdentity = `
SELECT current_database(), coalesce(inet_server_port(), current_setting('port')::int),
	to_char(pg_postmaster_start_time() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
	has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE')`

// qSystemIdentifier is the cluster's system identifier (pg_control_system
// is not every role's).
const qSystemIdentifier = `SELECT system_identifier::text FROM pg_control_system()`
