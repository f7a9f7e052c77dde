package perf

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// createDatabase makes a database whose URL connects; a second create of
// the same name fails; dropDatabase drops it even with a connection open,
// and dropping it again is not an error.
func TestCreateAndDropDatabase(t *testing.T) {
	ctx := context.Background()
	name := pgtest.Name(t, "dbtest")
	url, err := createDatabase(ctx, pgtest.AdminURL(), name, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dropDatabase(context.Background(), pgtest.AdminURL(), name) })
	require.True(t, strings.Contains(url, "/"+name), url)

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var current string
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_database()").Scan(&current))
	require.Equal(t, name, current)

	_, err = createDatabase(ctx, pgtest.AdminURL(), name, "")
	require.ErrorContains(t, err, "create database")

	require.NoError(t, dropDatabase(ctx, pgtest.AdminURL(), name), "with a connection still open")
	require.NoError(t, dropDatabase(ctx, pgtest.AdminURL(), name))
	_, err = pgx.Connect(ctx, url)
	require.Error(t, err, "the database is gone")

	_, err = createDatabase(ctx, "mysql://root@localhost/x", name, "")
	require.ErrorContains(t, err, "expected a postgres:// URL")
}
