package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/migrations"
)

// TestMigrateUpAtTheNewestVersion: a clean database at the newest version
// is left as it is (the quick check every ingest runs), while a dirty one
// still goes to golang-migrate, which refuses it, and an older one is
// migrated.
func TestMigrateUpAtTheNewestVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	from, to, err := st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint{latest, latest}, [2]uint{from, to})

	_, err = st.Pool().Exec(ctx, `UPDATE ingest_schema_migrations SET dirty = true`)
	require.NoError(t, err)
	_, _, err = st.MigrateUp(ctx)
	require.ErrorContains(t, err, "the database schema is dirty at version")
	require.ErrorIs(t, err, store.ErrSchema)

	_, err = st.Pool().Exec(ctx, `UPDATE ingest_schema_migrations SET dirty = false`)
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
// clears it), newer than the binary, or older (every write needs the
// newest schema: "ingest migrate up").
func TestSchemaGuard(t *testing.T) {
	t.Parallel()
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
		older   bool
	}{
		{"newer than the binary", `UPDATE ingest_schema_migrations SET version = version + 1`,
			"newer than this binary's", "newer than this binary's", false},
		{"dirty", `UPDATE ingest_schema_migrations SET dirty = true`,
			`then record the version the schema is really at with "ingest migrate force N"`, "is dirty at version", false},
		{"older than the binary", `UPDATE ingest_schema_migrations SET version = version - 1`,
			fmt.Sprintf(`schema version %d, this binary needs %d): every write needs the newest schema; run "ingest migrate up" first`,
				latest-1, latest), "", true},
	}
	for _, tt := range tests {
		_, err := st.Pool().Exec(ctx, tt.sql)
		require.NoError(t, err, tt.name)
		err = st.CheckWritable(ctx)
		require.ErrorContains(t, err, tt.wantErr, tt.name)
		require.ErrorIs(t, err, store.ErrSchema, tt.name)
		require.Equal(t, tt.older, errors.Is(err, store.ErrNotMigrated), tt.name)
		if tt.up != "" {
			_, _, err = st.MigrateUp(ctx)
			require.ErrorContains(t, err, tt.up, tt.name)
		}
		require.NoError(t, st.MigrateForce(ctx, latest), tt.name)
		require.NoError(t, st.CheckWritable(ctx), tt.name)
	}
	require.ErrorContains(t, st.MigrateForce(ctx, latest+1), "is not one this binary carries")
}

// TestPlanDownSeesColumnsAndTables: the rehearsal finds a dropped column
// (22 drops latest_benchmark_points.result_deleted) and a dropped table
// (19 drops override_applications) with its rows, and rolls back: the
// version and the table stay.
func TestPlanDownSeesColumnsAndTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Pool().Exec(ctx, `INSERT INTO override_applications (plan_digest, changed, result)
		SELECT decode(repeat('ab', 32), 'hex'), false, '{}' FROM generate_series(1, 4)`)
	require.NoError(t, err)
	before, err := st.SchemaVersion(ctx)
	require.NoError(t, err)
	plan, err := st.PlanDown(ctx, stepsFrom(t, 19))
	require.NoError(t, err)
	require.Contains(t, plan.Drops, store.Drop{Schema: "public", Table: "latest_benchmark_points", Column: "result_deleted"})
	require.Contains(t, plan.Drops, store.Drop{Schema: "public", Table: "override_applications", Rows: 4})
	require.True(t, plan.LosesRows())
	require.Equal(t, uint(17), plan.To)
	after, err := st.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "the rehearsal was rolled back")
	var n int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM override_applications`).Scan(&n))
	require.EqualValues(t, 4, n)
}

// TestMigrateDownPartly: a down migration that fails after others ran
// says which versions were reverted and which failed.
func TestMigrateDownPartly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	// 22's down drops this trigger first: without it, that step fails.
	_, err = st.Pool().Exec(ctx, `DROP TRIGGER benchmark_results_deleted_points ON benchmark_results`)
	require.NoError(t, err)
	err = st.MigrateDown(ctx, stepsFrom(t, 22))
	var down *store.DownError
	require.ErrorAs(t, err, &down)
	require.Equal(t, uint(22), down.Failed)
	var reverted []uint
	for v := latest; v > 22; v-- {
		if stepsFrom(t, v) > stepsFrom(t, v+1) {
			reverted = append(reverted, v)
		}
	}
	require.Equal(t, reverted, down.Reverted)
	require.ErrorContains(t, err, "then the down migration of version 22 failed")
}

// stepsFrom counts the embedded migrations numbered v or higher.
func stepsFrom(t *testing.T, v uint) int {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	n := 0
	for _, name := range names {
		num, err := strconv.ParseUint(strings.SplitN(name, "_", 2)[0], 10, 32)
		require.NoError(t, err)
		if uint(num) >= v {
			n++
		}
	}
	return n
}
