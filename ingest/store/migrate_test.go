package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestMigrateUpAtTheNewestVersion: a clean database at the newest version
// is left as it is (the quick check every ingest runs), while a dirty one
// still goes to golang-migrate, which refuses it, and an older one is
// migrated.
func TestMigrateUpAtTheNewestVersion(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	from, to, err := st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint{latest, latest}, [2]uint{from, to})

	_, err = st.Pool().Exec(ctx, `UPDATE schema_migrations SET dirty = true`)
	require.NoError(t, err)
	_, _, err = st.MigrateUp(ctx)
	require.ErrorContains(t, err, "Dirty database version")

	_, err = st.Pool().Exec(ctx, `UPDATE schema_migrations SET dirty = false`)
	require.NoError(t, err)
	require.NoError(t, st.MigrateDown(ctx, 1))
	from, to, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint{latest - 1, latest}, [2]uint{from, to})
	v, err := st.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, store.MigrationStatus{Version: latest, Latest: latest}, v)
}
