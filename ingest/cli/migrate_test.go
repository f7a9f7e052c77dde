package cli_test

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/migrations"
)

// TestMigrate walks a migrated database down to nothing and back up.
func TestMigrate(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.NotZero(t, latest)
	db := pgtest.New(t)
	steps := []struct {
		args       []string
		wantStdout string
		wantTables bool
	}{
		{[]string{"version"}, fmt.Sprintf("schema version %d, binary carries %d\n", latest, latest), true},
		{[]string{"up"}, fmt.Sprintf("schema at version %d (was %d)\n", latest, latest), true},
		{[]string{"down", fmt.Sprint(migrationCount(t))}, fmt.Sprintf("reverted %d migration(s): %s (now at version 0)\n", migrationCount(t), newestFirst(t)), false},
		{[]string{"version"}, fmt.Sprintf("schema version 0, binary carries %d\n", latest), false},
		{[]string{"up"}, fmt.Sprintf("schema at version %d (was 0)\n", latest), true},
		{[]string{"version"}, fmt.Sprintf("schema version %d, binary carries %d\n", latest, latest), true},
	}
	for _, st := range steps {
		r := run(t, nil, append(append([]string{"migrate"}, st.args...), "--database-url", db)...)
		requireCode(t, cli.ExitOK, r)
		require.True(t, strings.HasSuffix(r.stdout, st.wantStdout), "migrate %v: %s", st.args, r.stdout)
		require.Equal(t, st.wantTables, tableExists(t, db, "benchmark_results"), "after migrate %v", st.args)
	}
}

// TestMigrateDownDefaultsToOneStep reverts with no count, via
// DATABASE_URL.
func TestMigrateDownDefaultsToOneStep(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	r := run(t, vars, "migrate", "down")
	requireCode(t, cli.ExitOK, r)
	// A fresh database: what the step drops (the newest migration's
	// columns) is empty, and the guard says so before it reverts.
	out, reverted, ok := strings.Cut(r.stdout, "reverted ")
	require.True(t, ok, r.stdout)
	require.Equal(t, fmt.Sprintf("1 migration(s): %d (now at version %d)\n", latest, previousMigration(t)), reverted)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		require.True(t, line == "" || strings.HasPrefix(line, "dropping ") && strings.Contains(line, " empty ("), line)
	}
	r = run(t, vars, "migrate", "version")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, fmt.Sprintf("schema version %d, binary carries %d\n", previousMigration(t), latest), r.stdout)
}

// TestNoMigrate: database commands apply pending migrations first unless
// --no-migrate or INGEST_NO_MIGRATE says not to; a write then refuses the
// older schema (a usage error) naming both versions and the fix.
func TestNoMigrate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		vars     map[string]string
		wantCode int
	}{
		{"--no-migrate", []string{"--no-migrate"}, nil, cli.ExitUsage},
		{"INGEST_NO_MIGRATE=1", nil, map[string]string{"INGEST_NO_MIGRATE": "1"}, cli.ExitUsage},
		{"--no-migrate=false beats INGEST_NO_MIGRATE", []string{"--no-migrate=false"}, map[string]string{"INGEST_NO_MIGRATE": "true"}, cli.ExitOK},
		{"migrations applied by default", nil, nil, cli.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			requireCode(t, cli.ExitOK, run(t, nil, "migrate", "down", fmt.Sprint(migrationCount(t)), "--database-url", db))
			require.False(t, tableExists(t, db, "benchmark_results"))

			r := run(t, tt.vars, append([]string{"demo", "--database-url", db}, tt.args...)...)
			requireCode(t, tt.wantCode, r)
			if tt.wantCode == cli.ExitOK {
				require.True(t, tableExists(t, db, "benchmark_results"))
				require.Equal(t, int64(12), count(t, db, "benchmark_results"))
				return
			}
			require.Contains(t, r.stderr, fmt.Sprintf(`ingest: the database is not migrated (schema version 0, this binary needs %d): `+
				`every write needs the newest schema; run "ingest migrate up" first`, slices.Max(migrationVersions(t))))
			require.False(t, tableExists(t, db, "benchmark_results"), "the schema was left alone")
		})
	}
}

// TestMigrateUsage covers bad migrate command lines.
func TestMigrateUsage(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no action", nil, "ingest migrate: name an action: up, down, force, version\nRun 'ingest migrate --help' for usage.\n"},
		{"unknown action", []string{"sideways"}, `ingest migrate: unknown action "sideways" (up, down, force, version)`},
		{"force without a version", []string{"force"}, "ingest migrate force: the version N to record is required"},
		{"force of a non-number", []string{"force", "x"}, "ingest migrate force: the version N to record is required"},
		{"zero steps", []string{"down", "0"}, `ingest migrate down: "0" is not a positive number of steps`},
		{"non-numeric steps", []string{"down", "two"}, `ingest migrate down: "two" is not a positive number of steps`},
		{"unknown flag", []string{"version", "--bogus"}, "ingest migrate version: unknown flag: --bogus"},
		{"extra argument", []string{"up", "3"}, `ingest migrate up: unexpected argument "3"`},
		{"bad --log-format", []string{"version", "--log-format", "xml"}, `ingest migrate version: invalid value "xml" for --log-format: want console|json`},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := run(t, map[string]string{"DATABASE_URL": db}, append([]string{"migrate"}, tt.args...)...)
				requireCode(t, cli.ExitUsage, r)
				require.Contains(t, r.stderr, tt.want)
				require.Empty(t, r.stdout)
			})
		}
	})
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	r := run(t, map[string]string{"DATABASE_URL": db}, "migrate", "version")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, fmt.Sprintf("schema version %d, binary carries %d\n", latest, latest), r.stdout, "no usage error changed the schema")
}

// migrationVersions are the versions of the embedded migrations, in order
// (numbers may have gaps: each feature owns its number).
func migrationVersions(t *testing.T) []uint {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	var out []uint
	for _, n := range names {
		v, err := strconv.ParseUint(strings.SplitN(n, "_", 2)[0], 10, 32)
		require.NoError(t, err)
		out = append(out, uint(v))
	}
	slices.Sort(out)
	return out
}

func migrationCount(t *testing.T) int { return len(migrationVersions(t)) }

// newestFirst lists every embedded version, newest first, as `ingest
// migrate down` names what it reverted.
func newestFirst(t *testing.T) string {
	v := migrationVersions(t)
	s := make([]string, len(v))
	for i := range v {
		s[len(v)-1-i] = fmt.Sprint(v[i])
	}
	return strings.Join(s, ", ")
}

// previousMigration is the version before the latest (0 when there is one).
func previousMigration(t *testing.T) uint {
	v := migrationVersions(t)
	if len(v) < 2 {
		return 0
	}
	return v[len(v)-2]
}
