package cli_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/migrations"
)

// insertOverrideApplications writes n rows into override_applications
// (migration 19's table): data a down migration would drop.
func insertOverrideApplications(t *testing.T, db string, n int) {
	t.Helper()
	execSQL(t, db, fmt.Sprintf(`INSERT INTO override_applications (plan_digest, changed, result)
		SELECT decode(repeat('ab', 32), 'hex'), true, '{}' FROM generate_series(1, %d)`, n))
}

// schemaVersion is the version `ingest migrate version` prints.
func schemaVersion(t *testing.T, db string) string {
	t.Helper()
	r := run(t, map[string]string{"DATABASE_URL": db}, "migrate", "version")
	requireCode(t, cli.ExitOK, r)
	return r.stdout
}

func versionLine(v uint, t *testing.T) string {
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	return fmt.Sprintf("schema version %d, binary carries %d\n", v, latest)
}

// versionsFrom counts the embedded migrations numbered v or higher: the
// steps down to just below v.
func versionsFrom(t *testing.T, v uint) int {
	n := 0
	for _, m := range migrationVersions(t) {
		if m >= v {
			n++
		}
	}
	return n
}

// TestMigrateDownTooFar: down N with N beyond the migrations below the
// current version is refused before anything runs (it used to revert
// everything, then fail), with or without --yes; the data stays.
func TestMigrateDownTooFar(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	db := pgtest.New(t)
	insertOverrideApplications(t, db, 3)
	for _, args := range [][]string{{"down", "100"}, {"down", "100", "--yes"}, {"down", fmt.Sprint(migrationCount(t) + 1), "--yes"}} {
		r := run(t, map[string]string{"DATABASE_URL": db}, append([]string{"migrate"}, args...)...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, fmt.Sprintf("ingest migrate down %s: more steps than migrations: the database is at version %d, with %d migrations at or below it",
			args[1], latest, migrationCount(t)), "%v", args)
		require.Contains(t, r.stderr, "nothing was run")
		require.Empty(t, r.stdout)
		require.Equal(t, versionLine(latest, t), schemaVersion(t, db))
		require.EqualValues(t, 3, count(t, db, "override_applications"))
	}
}

// TestMigrateDownDropsRows: a down migration that drops a table holding
// rows needs --yes; the refusal names the table and its row count and
// runs nothing. Tables without rows go without asking.
func TestMigrateDownDropsRows(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	above19 := versionsFrom(t, 20)
	r := run(t, vars, "migrate", "down", fmt.Sprint(above19))
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, versionLine(19, t), schemaVersion(t, db))
	insertOverrideApplications(t, db, 2)

	r = run(t, vars, "migrate", "down", "1")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, "table override_applications (2 rows)")
	require.Contains(t, r.stderr, "--yes")
	require.Contains(t, r.stderr, "nothing was run")
	require.EqualValues(t, 2, count(t, db, "override_applications"))
	require.Equal(t, versionLine(19, t), schemaVersion(t, db))

	r = run(t, vars, "migrate", "down", "1", "--yes")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "table override_applications (2 rows)")
	require.Contains(t, r.stdout, "reverted 1 migration(s): 19 (now at version 17)\n")
	require.False(t, tableExists(t, db, "override_applications"))
	require.Equal(t, versionLine(17, t), schemaVersion(t, db))
}

// TestMigrateDownRehearsed: a down migration that would fail is found by
// the rehearsal before anything runs: exit 1, the version unchanged,
// nothing reverted.
func TestMigrateDownRehearsed(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	db := pgtest.New(t)
	// 22's down drops this trigger first.
	execSQL(t, db, `DROP TRIGGER benchmark_results_deleted_points ON benchmark_results`)
	r := run(t, map[string]string{"DATABASE_URL": db}, "migrate", "down", fmt.Sprint(versionsFrom(t, 22)), "--yes")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "the down migration of version 22 would fail")
	require.Contains(t, r.stderr, "nothing was run")
	require.Equal(t, versionLine(latest, t), schemaVersion(t, db))
	require.True(t, tableExists(t, db, "override_applications"))
}

// migrateLegacy migrates the database at db to version v the way builds
// before ingest_schema_migrations did: golang-migrate's default table,
// schema_migrations.
func migrateLegacy(t *testing.T, db string, v uint) {
	t.Helper()
	src, err := iofs.New(migrations.FS, ".")
	require.NoError(t, err)
	cfg, err := pgx.ParseConfig(db)
	require.NoError(t, err)
	sqlDB := stdlib.OpenDB(*cfg)
	drv, err := pgxmigrate.WithInstance(sqlDB, &pgxmigrate.Config{})
	require.NoError(t, err)
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	require.NoError(t, err)
	defer m.Close()
	if err := m.Migrate(v); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		require.NoError(t, err)
	}
}

// TestLegacyVersionTableMoves: a database an earlier build migrated (its
// version in schema_migrations) moves to ingest_schema_migrations on the
// next command that migrates, version and data kept; read-only commands
// read it where it is without moving it.
func TestLegacyVersionTableMoves(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: 28400000391})
	tests := []struct {
		name string
		at   uint
		args []string
	}{
		{"migrate up from 19", 19, []string{"migrate", "up"}},
		{"load at the newest", latest, []string{"load", tree}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			migrateLegacy(t, db, tt.at)
			insertOverrideApplications(t, db, 2)
			require.Equal(t, versionLine(tt.at, t), schemaVersion(t, db), "read where it is")
			require.True(t, tableExists(t, db, "schema_migrations"), "a read moves nothing")

			vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}
			requireCode(t, cli.ExitOK, run(t, vars, tt.args...))
			require.False(t, tableExists(t, db, "schema_migrations"))
			require.True(t, tableExists(t, db, "ingest_schema_migrations"))
			require.Equal(t, versionLine(latest, t), schemaVersion(t, db))
			require.EqualValues(t, 2, count(t, db, "override_applications"))
			var rows int64
			conn, err := pgx.Connect(t.Context(), db)
			require.NoError(t, err)
			defer conn.Close(context.WithoutCancel(t.Context()))
			require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM ingest_schema_migrations WHERE NOT dirty`).Scan(&rows))
			require.EqualValues(t, 1, rows)
		})
	}
}

// TestForeignSchemaRefused: a database holding the reference ingest's
// schema, or any schema this program does not own, is refused by every
// command that writes (exit 2, nothing created) and named clearly by
// the read-only ones.
func TestForeignSchemaRefused(t *testing.T) {
	t.Parallel()
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: 28400000392})
	reference := `CREATE TABLE schema_migrations (filename text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (filename) SELECT f FROM unnest(ARRAY['001_initial_schema.sql', '002_eval_samples.sql',
			'003_latest_benchmarks_run_started_tiebreaker.sql', '004_relax_decode_zero_constraints.sql', '005_user_feedback.sql',
			'006_benchmark_results_workers.sql', '007_latest_benchmarks_single_run_per_line.sql', '008_agentic.sql',
			'009_latest_benchmarks_single_run_per_line.sql', '010_dataset_request_stats.sql']) f;
		CREATE TABLE configs (id serial PRIMARY KEY, hardware text NOT NULL);
		CREATE TABLE benchmark_results (id bigserial PRIMARY KEY, config_id int REFERENCES configs);
		INSERT INTO configs (hardware) VALUES ('h100')`
	other := `CREATE TABLE widgets (id int); CREATE TABLE gadgets (id int); CREATE TABLE sprockets (id int); CREATE TABLE cogs (id int)`
	schemas := []struct {
		name, sql, want string
	}{
		{"reference", reference, "the reference ingest's schema, last migration 010_dataset_request_stats.sql"},
		{"other", other, "a schema this program does not own (4 tables in public, e.g. cogs, gadgets, sprockets; no ingest_schema_migrations)"},
	}
	commands := [][]string{
		{"load", tree},
		{"migrate", "up"},
		{"migrate", "down"},
		{"migrate", "force", "5"},
		{"migrate", "version"},
		{"status"},
	}
	for _, s := range schemas {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			execSQL(t, db, s.sql)
			before := publicTables(t, db)
			for _, args := range commands {
				r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}, args...)
				requireCode(t, cli.ExitUsage, r)
				require.Contains(t, r.stderr, s.want, "%v", args)
				require.Contains(t, r.stderr, "ingest adopt", "%v", args)
				require.Equal(t, before, publicTables(t, db), "%v created nothing", args)
				require.False(t, tableExists(t, db, "ingest_schema_migrations"), "%v", args)
				var dashboard bool
				conn, err := pgx.Connect(t.Context(), db)
				require.NoError(t, err)
				require.NoError(t, conn.QueryRow(t.Context(), `SELECT to_regnamespace('dashboard') IS NOT NULL`).Scan(&dashboard))
				conn.Close(context.WithoutCancel(t.Context()))
				require.False(t, dashboard, "%v created the dashboard schema", args)
			}
		})
	}
}

// TestEmptyDatabaseMigrates: an empty database is ours to migrate; the
// version goes to ingest_schema_migrations.
func TestEmptyDatabaseMigrates(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	db := pgtest.NewEmpty(t)
	r := run(t, map[string]string{"DATABASE_URL": db}, "migrate", "up")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, fmt.Sprintf("schema at version %d (was 0)\n", latest), r.stdout)
	require.True(t, tableExists(t, db, "ingest_schema_migrations"))
	require.False(t, tableExists(t, db, "schema_migrations"))
}
