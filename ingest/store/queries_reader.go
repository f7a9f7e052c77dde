package store

// SQL of the dashboard's reader role (ingest reader create). The role's
// name is quoted by the caller (pgx.Identifier), never interpolated raw.

// qReaderRole describes the role: whether it exists, the attributes that
// would let it write, the roles it is a member of and the objects it owns
// in the schemas the dashboard reads.
const qReaderRole = `
SELECT current_database(),
	r.oid IS NOT NULL,
	coalesce(r.rolsuper OR r.rolbypassrls OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication, false),
	coalesce((SELECT array_agg(g.rolname ORDER BY g.rolname) FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
		WHERE m.member = r.oid), '{}'),
	(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relowner = r.oid AND n.nspname IN ('public', 'dashboard'))
FROM (SELECT $1::text AS name) q
LEFT JOIN pg_roles r ON r.rolname = q.name`

// qReaderWrites lists every table, view and materialized view of the
// dashboard's schemas the role could change, or could not read, after
// the grants: none may be listed.
const qReaderWrites = `
SELECT n.nspname || '.' || c.relname,
	has_table_privilege($1::text, c.oid, 'SELECT'),
	has_table_privilege($1::text, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ('public', 'dashboard') AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
	AND (NOT has_table_privilege($1::text, c.oid, 'SELECT')
		OR has_table_privilege($1::text, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
ORDER BY 1`
