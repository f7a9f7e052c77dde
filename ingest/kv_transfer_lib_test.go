package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
)

// A row's kv_transfer_lib is stored in lower case on its benchmark row and
// returned where the site reads it (benchmark_results and latest_benchmarks,
// by name from the row's JSON); it is a value of the point, not part of its
// key: a rerun is duplicates, a changed library updates the same row.
func TestKVTransferLibStoredAndRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := RunID(778, 1)
	ingestWith := func(lib any) {
		dir := t.TempDir()
		perJob(t, dir, "p4", benchRow(4, map[string]any{"kv_transfer_lib": lib}))
		perJob(t, dir, "p8", benchRow(8, nil))
		e.mustIngest(dir, ingest.Config{Run: run})
	}
	type read struct {
		ids       []int64
		rows, lbs map[int64]*string
	}
	reads := func() read {
		r := read{rows: map[int64]*string{}, lbs: map[int64]*string{}}
		ctx := context.Background()
		q, err := e.pool().Query(ctx, `SELECT br.id, to_jsonb(br) ->> 'kv_transfer_lib' FROM benchmark_results br ORDER BY br.id`)
		require.NoError(t, err)
		for q.Next() {
			var id int64
			var v *string
			require.NoError(t, q.Scan(&id, &v))
			r.ids, r.rows[id] = append(r.ids, id), v
		}
		require.NoError(t, q.Err())
		q, err = e.pool().Query(ctx, `SELECT lb.id, to_jsonb(lb) ->> 'kv_transfer_lib' FROM latest_benchmarks lb`)
		require.NoError(t, err)
		for q.Next() {
			var id int64
			var v *string
			require.NoError(t, q.Scan(&id, &v))
			r.lbs[id] = v
		}
		require.NoError(t, q.Err())
		return r
	}
	libOf := func(m map[int64]*string) []string {
		var out []string
		for _, v := range m {
			if v != nil {
				out = append(out, *v)
			}
		}
		return out
	}

	ingestWith("NIXL")
	first := reads()
	require.Len(t, first.ids, 2)
	require.Equal(t, []string{"nixl"}, libOf(first.rows))
	require.Equal(t, first.rows, first.lbs, "the latest chart shows both rows with their values")

	sum := e.mustIngest(func() string {
		dir := t.TempDir()
		perJob(t, dir, "p4", benchRow(4, map[string]any{"kv_transfer_lib": "NIXL"}))
		perJob(t, dir, "p8", benchRow(8, nil))
		return dir
	}(), ingest.Config{Run: run})
	require.Zero(t, sum.Rows.Benchmark.New)
	require.Zero(t, sum.Details.BenchmarkRowsUpdated, "a rerun changes nothing")
	require.Equal(t, first, reads())

	ingestWith("mooncake")
	second := reads()
	require.Equal(t, first.ids, second.ids, "the library is not part of the point's key")
	require.Equal(t, []string{"mooncake"}, libOf(second.rows))
	require.Equal(t, []string{"mooncake"}, libOf(second.lbs))
}
