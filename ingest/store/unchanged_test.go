package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestPriorIngestSeesWritesDuringTheRun: the data an ingest's outcome
// depends on is the data as its transaction began, so a write committed
// while it ran (here: by hand, between its begin and its commit) counts as
// a change since; an ingest with no such write is unchanged, and another
// run's ingest afterwards does not change that.
func TestPriorIngestSeesWritesDuringTheRun(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	_, _, err := st.MigrateUp(ctx)
	require.NoError(t, err)

	ingest := func(runID int64, during func()) {
		t.Helper()
		tx, err := st.BeginRun(ctx, start(runID))
		require.NoError(t, err)
		_, err = tx.StageBenchmarks(ctx, iterate[schema.StagedBenchmark](nil))
		require.NoError(t, err)
		_, err = tx.Apply(ctx, nil)
		require.NoError(t, err)
		if during != nil {
			during()
		}
		tx.SetInputDigest([]byte("digest"), nil)
		sum := &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}
		require.NoError(t, tx.Finish(ctx, sum, json.RawMessage(`[]`), false))
	}
	prior := func(runID int64) schema.PriorIngest {
		t.Helper()
		p, err := st.PriorIngest(ctx, start(runID).Run)
		require.NoError(t, err)
		require.NotZero(t, p.IngestID)
		require.Equal(t, []byte("digest"), p.InputDigest)
		return p
	}

	ingest(42, nil)
	require.True(t, prior(42).DataUnchanged, "nothing was written since")

	ingest(43, nil) // another run's ingest
	require.True(t, prior(42).DataUnchanged, "another run's ingest counted as a change")

	ingest(42, func() {
		_, err := st.Pool().Exec(ctx, `UPDATE workflow_runs SET name = name WHERE github_run_id = 43`)
		require.NoError(t, err)
	})
	require.False(t, prior(42).DataUnchanged, "a write committed while the ingest ran went unnoticed")
}
