package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestNoSchemaHere: the read-only commands on an empty database (nothing
// migrated it) say so and how to fix it, as a usage error, instead of a
// raw "relation does not exist"; the database stays empty.
func TestNoSchemaHere(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	out := filepath.Join(t.TempDir(), "samples.parquet")
	for _, args := range [][]string{
		{"status"},
		{"status", "--run-id", "1"},
		{"report", "--run-id", "1"},
		{"verify", "--run-id", "1"},
		{"export", "telemetry", "--run-id", "1", "--out", out},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := run(t, map[string]string{"DATABASE_URL": db}, args...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, "no ingest schema here: run `ingest migrate up`")
			require.NotContains(t, r.stderr, "SQLSTATE")
		})
	}
	require.EqualValues(t, 0, queryInt64s(t, db, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`)[0], "a read-only command created tables")
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "export wrote %s", out)
}

// TestSmallerUsageErrors: a missing supplemental file exits 2 like a
// missing run tree; a URL of another database says it wants PostgreSQL;
// `ingest help` of a topic that does not exist is a usage error with a
// suggestion.
func TestSmallerUsageErrors(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want []string
	}{
		{"supplemental missing file", map[string]string{"DATABASE_URL": unreachableURL}, []string{"supplemental", missing},
			[]string{"missing.json"}},
		{"mysql flag", nil, []string{"status", "--database-url", "mysql://root@localhost/db"},
			[]string{"--database-url", "wants a PostgreSQL URL (postgres://…)", `"mysql"`}},
		{"mysql env", map[string]string{"DATABASE_WRITE_URL": "mysql://root:pw@localhost/db"}, []string{"status"},
			[]string{"DATABASE_WRITE_URL", "wants a PostgreSQL URL"}},
		{"help nonsense", nil, []string{"help", "nonsense"}, []string{`unknown command "nonsense"`}},
		{"help typo", nil, []string{"help", "statsu"}, []string{`Did you mean "status"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.vars, tc.args...)
			requireCode(t, cli.ExitUsage, r)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
			require.NotContains(t, r.stderr, "pw@", "the URL's password was printed")
			require.Empty(t, r.stdout)
		})
	}
	// A known topic is still the command's help, exit 0.
	r := run(t, nil, "help", "status")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "ingest status")
}
