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
	require.ErrorContains(t, err, "the database schema is dirty at version")
	require.ErrorIs(t, err, store.ErrSchema)

	_, err = st.Pool().Exec(ctx, `UPDATE schema_migrations SET dirty = false`)
	require.NoError(t, err)
	require.NoError(t, st.MigrateDown(ctx, 1))
	before, err := st.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Less(t, before.Version, latest, "one step down (migration numbers may have gaps)")
	from, to, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint{before.Version, latest}, [2]uint{from, to})
	v, err := st.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, store.MigrationStatus{Version: latest, Latest: latest}, v)
}

// TestSchemaGuard: a database this binary must not write to is refused
// with a message saying what to do — dirty (then "ingest migrate force N"
// clears it) or newer than the binary.
func TestSchemaGuard(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.NoError(t, st.CheckWritable(ctx))
	tests := []struct {
		name    string
		sql     string
		wantErr string
		up      string // MigrateUp's error ("" none)
	}{
		{"newer than the binary", `UPDATE schema_migrations SET version = version + 1`,
			"newer than this binary's", "newer than this binary's"},
		{"dirty", `UPDATE schema_migrations SET dirty = true`,
			`then record the version the schema is really at with "ingest migrate force N"`, "is dirty at version"},
		{"older (--no-migrate may write to it)", `UPDATE schema_migrations SET version = version - 1`, "", ""},
	}
	for _, tt := range tests {
		_, err := st.Pool().Exec(ctx, tt.sql)
		require.NoError(t, err, tt.name)
		err = st.CheckWritable(ctx)
		if tt.wantErr == "" {
			require.NoError(t, err, tt.name)
			require.NoError(t, st.MigrateForce(ctx, latest), tt.name)
			continue
		}
		require.ErrorContains(t, err, tt.wantErr, tt.name)
		require.ErrorIs(t, err, store.ErrSchema, tt.name)
		if tt.up != "" {
			_, _, err = st.MigrateUp(ctx)
			require.ErrorContains(t, err, tt.up, tt.name)
		}
		require.NoError(t, st.MigrateForce(ctx, latest), tt.name)
		require.NoError(t, st.CheckWritable(ctx), tt.name)
	}
	require.ErrorContains(t, st.MigrateForce(ctx, latest+1), "is not one this binary carries")
}
