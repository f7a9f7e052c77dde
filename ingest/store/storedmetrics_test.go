package store_test

import (
	"context"
	"encoding/json"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestStoredMetricsAreWrittenButNotDigested: a row staged with
// StoredMetrics is written with them; its content digest is that of the
// point's own metrics, so a rerun whose StoredMetrics differ is still a
// duplicate and leaves the stored values alone. TraceRowLinks reads the
// numeric values of the asked keys and says when an owned key holds
// something else.
func TestStoredMetricsAreWrittenButNotDigested(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	p := testPoint(4, 1)
	p.Metrics["owned"] = "n/a"
	row := func(stored map[string]any) []schema.StagedBenchmark {
		return []schema.StagedBenchmark{{Point: p, Source: schema.Provenance{Artifact: "bmk_a", File: "a.json"}, StoredMetrics: stored}}
	}
	read := func() map[string]any {
		var m map[string]any
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT metrics FROM benchmark_results`).Scan(&m))
		return m
	}
	first := ingestOnce(t, st, row(map[string]any{"tput_per_gpu": 1.0, "owned": 2.0, "marker": 1.0}), nil)
	require.EqualValues(t, 1, first.BenchmarkNew)
	require.Equal(t, map[string]any{"tput_per_gpu": 1.0, "owned": 2.0, "marker": 1.0}, read())

	again := ingestOnce(t, st, row(map[string]any{"tput_per_gpu": 1.0, "owned": 3.0}), nil)
	require.EqualValues(t, 1, again.duplicate())
	require.Zero(t, again.BenchmarkUpdated)
	require.Equal(t, map[string]any{"tput_per_gpu": 1.0, "owned": 2.0, "marker": 1.0}, read(), "the stored values stay")

	for _, tc := range []struct {
		metrics    string
		wantOther  bool
		wantValues map[string]float64
	}{
		{`{"tput_per_gpu": 1, "owned": 2, "marker": 1}`, false, map[string]float64{"owned": 2, "marker": 1}},
		{`{"tput_per_gpu": 1, "owned": "n/a"}`, true, map[string]float64{}},
		{`{"tput_per_gpu": 1, "owned": null, "marker": 1}`, true, map[string]float64{"marker": 1}},
	} {
		_, err := st.Pool().Exec(ctx, `UPDATE benchmark_results SET metrics = $1::jsonb`, tc.metrics)
		require.NoError(t, err)
		tx, err := st.BeginRun(ctx, start(42))
		require.NoError(t, err)
		win := benchmarks.NewWinners()
		_, err = tx.StageBenchmarks(ctx, iterate(row(nil)), win.Add)
		require.NoError(t, err)
		_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
		require.NoError(t, err)
		points := win.Points()
		require.Len(t, points, 1)
		links, err := tx.TraceRowLinks(ctx, [][]byte{points[0].Digest}, []string{"owned", "marker"}, []string{"owned", "marker"})
		require.NoError(t, err)
		l := links[string(points[0].Digest)]
		require.Equal(t, tc.wantOther, l.OwnedOther, tc.metrics)
		require.Equal(t, tc.wantValues, l.Metrics, tc.metrics)
		require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))
	}
}
