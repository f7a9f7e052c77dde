package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// CreateDatabase makes a database whose URL connects; a second create of
// the same name fails; DropDatabase drops it even with a connection open,
// and dropping it again is not an error.
func TestCreateAndDropDatabase(t *testing.T) {
	ctx := context.Background()
	name := pgtest.Name(t, "dbtest")
	url, err := store.CreateDatabase(ctx, pgtest.AdminURL(), name)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.DropDatabase(context.Background(), pgtest.AdminURL(), name) })
	require.True(t, strings.Contains(url, "/"+name), url)

	st, err := store.Open(ctx, url, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	var current string
	require.NoError(t, st.Pool().QueryRow(ctx, "SELECT current_database()").Scan(&current))
	require.Equal(t, name, current)

	_, err = store.CreateDatabase(ctx, pgtest.AdminURL(), name)
	require.ErrorContains(t, err, "create database")

	require.NoError(t, store.DropDatabase(ctx, pgtest.AdminURL(), name), "with the pool still open")
	require.NoError(t, store.DropDatabase(ctx, pgtest.AdminURL(), name))
	_, err = store.Open(ctx, url, zaptest.NewLogger(t))
	require.Error(t, err, "the database is gone")

	_, err = store.CreateDatabase(ctx, "mysql://root@localhost/x", name)
	require.ErrorContains(t, err, "expected a postgres:// URL")
}
