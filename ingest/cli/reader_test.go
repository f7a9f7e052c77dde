package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// newReader creates a reader role with `ingest reader create` (a dry run
// first, which creates nothing; then twice, the second bringing it in
// line) and drops it when the test ends. Roles belong to the server, so
// the name is random.
func newReader(t *testing.T, db string, vars map[string]string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	role := "ingest_reader_test_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		defer admin.Close(ctx)
		r := pgx.Identifier{role}.Sanitize()
		_, err := admin.Exec(ctx, "DROP OWNED BY "+r)
		require.NoError(t, err)
		_, err = admin.Exec(ctx, "DROP ROLE "+r)
		require.NoError(t, err)
	})
	exists := func() bool {
		var ok bool
		require.NoError(t, admin.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&ok))
		return ok
	}
	dry := run(t, vars, "reader", "create", role, "--dry-run")
	requireCode(t, cli.ExitOK, dry)
	require.Contains(t, dry.stdout, "would be created")
	require.Contains(t, dry.stdout, `ALTER ROLE "`+role+`" SET search_path = dashboard, public;`)
	require.False(t, exists(), "a dry run creates nothing")

	first := run(t, vars, "reader", "create", role)
	requireCode(t, cli.ExitOK, first)
	require.Contains(t, first.stdout, "reader role "+role+" created")
	again := run(t, vars, "reader", "create", role)
	requireCode(t, cli.ExitOK, again)
	require.Contains(t, again.stdout, "brought in line")
	require.NotContains(t, again.stdout, "CREATE ROLE")
	return role
}

// connectAs connects to db as role, with no session settings of ours: the
// role's own defaults apply, as for the site.
func connectAs(t *testing.T, db, role string) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(db)
	require.NoError(t, err)
	u.User = url.User(role)
	conn, err := pgx.Connect(t.Context(), u.String())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.WithoutCancel(t.Context())) })
	var path string
	require.NoError(t, conn.QueryRow(t.Context(), "SHOW search_path").Scan(&path))
	require.Equal(t, "dashboard, public", path)
	return conn
}

// readerCannotWrite: the reader reads every table and view of the schemas
// the site reads, and UPDATE, INSERT, DELETE and TRUNCATE fail on each,
// even in a transaction it declares read-write; nothing changes.
func readerCannotWrite(t *testing.T, reader *pgx.Conn) {
	ctx := t.Context()
	rows, err := reader.Query(ctx, `
		SELECT n.nspname, c.relname, c.relkind::text,
			(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum LIMIT 1)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('public', 'dashboard') AND c.relkind IN ('r', 'p', 'v', 'm')
		ORDER BY 1, 2`)
	require.NoError(t, err)
	type rel struct{ Schema, Name, Kind, Col string }
	rels, err := pgx.CollectRows(rows, pgx.RowToStructByPos[rel])
	require.NoError(t, err)
	require.Greater(t, len(rels), 30)
	kinds := map[string]int{}
	for _, r := range rels {
		kinds[r.Kind]++
		q := pgx.Identifier{r.Schema, r.Name}.Sanitize()
		c := pgx.Identifier{r.Col}.Sanitize()
		_, err := reader.Exec(ctx, "SELECT * FROM "+q+" LIMIT 1")
		require.NoError(t, err, "%s: the reader reads it", q)
		for _, stmt := range []string{
			"UPDATE " + q + " SET " + c + " = " + c,
			"INSERT INTO " + q + " DEFAULT VALUES",
			"DELETE FROM " + q,
			"TRUNCATE " + q,
		} {
			err := inReadWrite(ctx, reader, stmt)
			var pg *pgconn.PgError
			require.True(t, errors.As(err, &pg), "%s: %s must fail, got %v", q, stmt, err)
			// 42501 no privilege; a view or materialized view PostgreSQL
			// cannot write through fails before privileges are looked at.
			require.Contains(t, []string{"42501", "42809", "55000"}, pg.Code, "%s: %s: %v", q, stmt, pg)
			if r.Kind == "r" || r.Kind == "p" {
				require.Equal(t, "42501", pg.Code, "%s: %s: %v", q, stmt, pg)
			}
		}
	}
	require.Positive(t, kinds["v"], "views were tried")
	// latest_benchmarks is a plain view since migration 13, kept by the
	// ingest: no materialized view is left.
	require.Zero(t, kinds["m"], "no materialized view")
	require.Contains(t, rels, rel{"public", "latest_benchmarks", "v", rels[slices.IndexFunc(rels, func(r rel) bool {
		return r.Name == "latest_benchmarks"
	})].Col}, "latest_benchmarks was tried, as a view")
	// By default its transactions are read-only too.
	_, err = reader.Exec(ctx, "UPDATE configs SET model = model")
	var pg *pgconn.PgError
	require.True(t, errors.As(err, &pg))
	require.Equal(t, "25006", pg.Code)
	_, err = reader.Exec(ctx, "REFRESH MATERIALIZED VIEW latest_benchmarks")
	require.Error(t, err)
}

// inReadWrite runs one statement in a transaction that asks to write, and
// rolls it back.
func inReadWrite(ctx context.Context, conn *pgx.Conn, stmt string) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the statement is meant to fail
	_, err = tx.Exec(ctx, stmt)
	return err
}

// A role that could write whatever it is granted is refused.
func TestReaderRefusesPowerfulRoles(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	r := run(t, vars, "reader", "create", "postgres")
	require.NotEqual(t, cli.ExitOK, r.code)
	require.True(t, strings.Contains(r.stderr, "SUPERUSER"), r.String())
	r = run(t, vars, "reader", "drop", "x")
	requireCode(t, cli.ExitUsage, r)
}
