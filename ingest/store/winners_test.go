package store_test

import (
	"context"
	"encoding/json"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// The winners ranked while staging are the rows qUpsertBenchmarks writes,
// on a first ingest and on a rerun (nothing written), and TraceRowLinks
// finds each one's stored row by its content digest.
func TestTracePointsAreTheWrittenWinners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()

	at := func(a, f string, row int) schema.Provenance { return schema.Provenance{Artifact: a, File: f, Row: row} }
	rows := []schema.StagedBenchmark{
		// conc 4: the aggregate copy arrives first, then an older and a newer attempt.
		{Point: testPoint(4, 3), Source: at("results_bmk", "agg.json", 0), IsAggregate: true},
		{Point: testPoint(4, 1), Source: at("bmk_a", "x.json", 0), AttemptRank: 1},
		{Point: testPoint(4, 2), Source: at("bmk_b", "x.json", 0), AttemptRank: 0},
		// conc 8: two copies of one attempt, ordered by artifact bytes ("Z" < "a"), then file, then row.
		{Point: testPoint(8, 5), Source: at("bmk_a", "y.json", 1)},
		{Point: testPoint(8, 6), Source: at("bmk_Z", "y.json", 2)},
		{Point: testPoint(8, 7), Source: at("bmk_Z", "y.json", 1)},
		// conc 16: only the aggregate.
		{Point: testPoint(16, 8), Source: at("results_bmk", "agg.json", 3), IsAggregate: true},
	}
	for pass := range 2 {
		tx, err := st.BeginRun(ctx, start(77))
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		win := benchmarks.NewWinners()
		_, err = tx.StageBenchmarks(ctx, iterate(rows), win.Add)
		require.NoError(t, err)
		_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
		require.NoError(t, err)

		points := win.Points()
		got := map[string]schema.TracePoint{}
		var digests [][]byte
		for _, p := range points {
			got[p.Artifact+"/"+p.File] = p
			digests = append(digests, p.Digest)
		}
		require.Len(t, points, 3, "pass %d", pass)
		require.Equal(t, "bmk_Z", points[0].Artifact, "source order")
		require.False(t, got["bmk_b/x.json"].IsAggregate)
		require.Contains(t, got, "bmk_Z/y.json")
		require.True(t, got["results_bmk/agg.json"].IsAggregate)

		links, err := tx.TraceRowLinks(ctx, digests, nil, nil)
		require.NoError(t, err)
		require.Len(t, links, 3)
		require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))
		stored := map[int64]string{}
		q, err := st.Pool().Query(ctx, `SELECT id, source_artifact || '/' || source_file || '#' || source_row FROM benchmark_results`)
		require.NoError(t, err)
		for q.Next() {
			var id int64
			var src string
			require.NoError(t, q.Scan(&id, &src))
			stored[id] = src
		}
		require.NoError(t, q.Err())
		// The statement's winners are the ranked ones, row included.
		want := map[string]string{"bmk_b/x.json": "bmk_b/x.json#0", "bmk_Z/y.json": "bmk_Z/y.json#1", "results_bmk/agg.json": "results_bmk/agg.json#3"}
		for k, p := range got {
			l, ok := links[string(p.Digest)]
			require.True(t, ok, k)
			require.Equal(t, want[k], stored[l.RowID], "pass %d", pass)
			require.Nil(t, l.TraceDigest)
		}
	}
}
