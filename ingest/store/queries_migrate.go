package store

// MigrationsTable is where golang-migrate keeps this program's schema
// version: a name no other tool uses, so that a database the reference
// ingest made (its own schema_migrations holds file names) is recognised
// rather than misread. legacyMigrationsTable is golang-migrate's default,
// which builds before it used.
const (
	MigrationsTable       = "ingest_schema_migrations"
	legacyMigrationsTable = "schema_migrations"
)

// qSchemaVersion and qLegacySchemaVersion read golang-migrate's version
// row without creating its table (as its own check does).
const (
	qSchemaVersion       = `SELECT version, dirty FROM ingest_schema_migrations LIMIT 1`
	qLegacySchemaVersion = `SELECT version, dirty FROM schema_migrations LIMIT 1`
)

// qSchemaInventory describes the current schema (where golang-migrate
// keeps its table and our migrations create theirs): whether our version
// table is there, the columns of a schema_migrations table ("name type",
// in order), whether our ledger (ingests, which the reference lacks) is
// there, and how many tables and views it holds, with the first few names.
const qSchemaInventory = `
WITH s AS (SELECT current_schema() AS name),
rels AS (
    SELECT c.relname::text AS relname FROM pg_class c, s
    WHERE c.relnamespace = s.name::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f'))
SELECT s.name,
       to_regclass(format('%I.%I', s.name, 'ingest_schema_migrations')) IS NOT NULL,
       coalesce((SELECT array_agg(a.attname::text || ' ' || format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum)
                 FROM pg_attribute a
                 WHERE a.attrelid = to_regclass(format('%I.%I', s.name, 'schema_migrations'))
                   AND a.attnum > 0 AND NOT a.attisdropped), '{}'),
       to_regclass(format('%I.%I', s.name, 'ingests')) IS NOT NULL,
       (SELECT count(*) FROM rels),
       coalesce((SELECT array_agg(relname ORDER BY relname) FROM (SELECT relname FROM rels ORDER BY relname LIMIT 3) x), '{}')
FROM s`

// qReferenceLastMigration is the newest file the reference ingest applied
// (it applies them in file-name order).
const qReferenceLastMigration = `SELECT coalesce(max(filename::text), '') FROM schema_migrations`

// Moving a legacy version table: under an advisory lock (two processes
// never move it at once; each looks again once it holds the lock), the old
// table locked against an older build writing it, then create, copy,
// drop, all in one transaction.
const (
	qLockVersionTableMove = `SELECT pg_advisory_xact_lock(hashtextextended('ingest-schema-migrations-move', 0))`
	qLockLegacyVersion    = `LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE`
	qCreateVersionTable   = `CREATE TABLE ingest_schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)`
	qCopyLegacyVersion    = `INSERT INTO ingest_schema_migrations (version, dirty) SELECT version, dirty FROM schema_migrations`
	qDropLegacyVersion    = `DROP TABLE schema_migrations`
)

// qColumns lists every column of every table (not views: they hold no
// rows) outside the system schemas, as schema, table, column. A rehearsed
// down migration compares it before and after to learn what it drops.
const qColumns = `
SELECT n.nspname::text, c.relname::text, coalesce(a.attname::text, '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
ORDER BY 1, 2, 3`
