package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

func viewRows(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM latest_benchmarks`).Scan(&n))
	return n
}

// TestRefreshOfAnEmptyViewIsPlain: in a schema before migration 000013
// (a command run with --no-migrate), where latest_benchmarks is a
// materialized view, an empty (or never populated) view is refreshed
// without CONCURRENTLY — which would need the unique index, and
// cannot run on a view that was never populated — while a view that shows
// rows is refreshed concurrently, so its readers keep the old rows.
func TestRefreshOfAnEmptyViewIsPlain(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.NoError(t, st.MigrateDown(ctx, int(latest)-12))
	exec := func(q string) {
		_, err := st.Pool().Exec(ctx, q)
		require.NoError(t, err)
	}
	// Without its unique index the view cannot be refreshed concurrently:
	// a refresh that succeeds here was a plain one.
	exec(`DROP INDEX latest_benchmarks_pk`)
	rows := []schema.StagedBenchmark{{Point: testPoint(4, 1), Source: schema.Provenance{Artifact: "bmk_a", File: "a.json"}}}
	ingestOnce(t, st, rows, nil)
	require.Zero(t, viewRows(t, st))
	r, err := st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshRefreshed, r.Status)
	require.EqualValues(t, 1, viewRows(t, st))

	// The view shows a row now: the next refresh is concurrent, and fails
	// without the index, leaving the old row and the marks.
	rows = append(rows, schema.StagedBenchmark{Point: testPoint(8, 2), Source: schema.Provenance{Artifact: "bmk_a", File: "b.json"}})
	ingestOnce(t, st, rows, nil)
	r, err = st.RefreshLatestBenchmarks(ctx, false)
	require.Error(t, err)
	require.Equal(t, schema.RefreshFailed, r.Status)
	require.Contains(t, r.Error, "concurrently")
	require.EqualValues(t, 1, viewRows(t, st))
	state, ok, err := st.LatestBenchmarksState(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, state.Stale)

	// A view never populated (WITH NO DATA) cannot be read or refreshed
	// concurrently; the refresh populates it.
	exec(`CREATE UNIQUE INDEX latest_benchmarks_pk ON latest_benchmarks
		(config_id, conc, isl, osl, benchmark_type, offload_mode, recipe_fingerprint) NULLS NOT DISTINCT`)
	exec(`REFRESH MATERIALIZED VIEW latest_benchmarks WITH NO DATA`)
	r, err = st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshRefreshed, r.Status)
	require.EqualValues(t, 2, viewRows(t, st))
	r, err = st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshSkipped, r.Status)
}
