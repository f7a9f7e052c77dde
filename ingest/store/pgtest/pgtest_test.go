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

// NewFrom builds a key's template once per process and gives every test a
// copy of its own, with what the build returned; each copy carries the
// prefix and is gone once its test ends.
func TestNewFromBuildsOnce(t *testing.T) {
	ctx := context.Background()
	builds := 0
	build := func(ctx context.Context, url string) (int, error) {
		builds++
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `CREATE TABLE probe (x int); INSERT INTO probe VALUES (7)`)
		return 42, err
	}
	var names []string
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			raw, got := NewFrom(t, "probe", build)
			require.Equal(t, 42, got)
			u, err := url.Parse(raw)
			require.NoError(t, err)
			names = append(names, strings.TrimPrefix(u.Path, "/"))
			conn, err := pgx.Connect(ctx, raw)
			require.NoError(t, err)
			defer conn.Close(ctx)
			r, err := conn.Query(ctx, `SELECT x FROM probe`)
			require.NoError(t, err)
			rows, err := pgx.CollectRows(r, pgx.RowTo[int])
			require.NoError(t, err)
			require.Equal(t, []int{7}, rows, "the template's rows, not the other copy's")
			_, err = conn.Exec(ctx, `INSERT INTO probe VALUES (8)`)
			require.NoError(t, err)
		})
	}
	require.Equal(t, 1, builds)
	prefix, err := Prefix()
	require.NoError(t, err)
	require.Len(t, names, 2)
	require.NotEqual(t, names[0], names[1])
	templates.mu.Lock()
	tmpl := templates.built["probe"].name
	templates.mu.Unlock()
	require.True(t, strings.HasPrefix(tmpl, prefix+"tmpl_probe_"), tmpl)
	for _, n := range names {
		require.True(t, strings.HasPrefix(n, prefix), n)
	}
	conn, err := pgx.Connect(ctx, AdminURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left))
	require.Zero(t, left, "dropped when the test ends: %v", names)
}
