package pgtest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The prefix comes from the environment and must be an identifier that
// needs no quoting and leaves room for the longest name built on it.
func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		env, want string
		ok        bool
	}{
		{"", DefaultPrefix, true},
		{"teamx_", "teamx_", true},
		{"_ci42_", "_ci42_", true},
		{strings.Repeat("a", 30), strings.Repeat("a", 30), true},
		{strings.Repeat("a", 31), "", false},
		{"TeamX_", "", false},
		{"9team_", "", false},
		{"team-x_", "", false},
		{"x; DROP DATABASE postgres; --", "", false},
		{`x"`, "", false},
	} {
		t.Setenv(PrefixEnv, tc.env)
		got, err := Prefix()
		if !tc.ok {
			require.ErrorContains(t, err, PrefixEnv, tc.env)
			continue
		}
		require.NoError(t, err, tc.env)
		require.Equal(t, tc.want, got)
	}
}

// Every database New, NewEmpty and the template are created under carries
// the prefix, and each is gone once its test (or the template's process)
// ends.
func TestDatabasesCarryThePrefix(t *testing.T) {
	const prefix = "pgtest_prefix_probe_"
	t.Setenv(PrefixEnv, prefix)
	var names []string
	t.Run("create", func(t *testing.T) {
		for _, raw := range []string{New(t), NewEmpty(t)} {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			name := strings.TrimPrefix(u.Path, "/")
			require.True(t, strings.HasPrefix(name, prefix), name)
			names = append(names, name)
		}
		templates.mu.Lock()
		tmpl := templates.name
		templates.mu.Unlock()
		require.True(t, strings.HasPrefix(tmpl, prefix+"tmpl_"), tmpl)
		require.Len(t, names, 2)
	})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, AdminURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left))
	require.Zero(t, left, "dropped when the test ends: %v", names)
}

// What a test writes through Tx or RunTx is gone once the test ends, and
// both work on the one shared database.
func TestTransactionsRollBack(t *testing.T) {
	ctx := context.Background()
	run := schema.RunStart{Run: schema.RunIdentity{Repo: "o/r", SourceRunID: 990001, SourceRunAttempt: 1},
		Meta: schema.RunMeta{Name: "probe", CreatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, Target: "test"}
	t.Run("write", func(t *testing.T) {
		tx := Tx(t)
		_, err := tx.Exec(ctx, `CREATE TABLE pgtest_probe (x int); INSERT INTO pgtest_probe VALUES (1)`)
		require.NoError(t, err)
		w := RunTx(t, run)
		require.NotZero(t, w.Run().WorkflowRunID)
	})
	conn, err := pgx.Connect(ctx, Shared(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var table *string
	var runs int
	require.NoError(t, conn.QueryRow(ctx, `SELECT to_regclass('pgtest_probe')::text, (SELECT count(*) FROM workflow_runs WHERE github_run_id = 990001)`).
		Scan(&table, &runs))
	require.Nil(t, table, "the table created in Tx is rolled back")
	require.Zero(t, runs, "the run written in RunTx is rolled back")
}
