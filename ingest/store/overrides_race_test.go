package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestApplyOverridesRacingIngestOfTheRun: `overrides apply` and an ingest
// of a run the ledger names, started together again and again, never
// deadlock (SQLSTATE 40P01): both take the run's advisory lock before
// they touch a row of it. The ingest writes attempt 2 while attempt 1 is
// stored and, as every ingest does, applies the run's ledger entries (a
// conclusion corrected on every attempt, a point purged) in its own
// transaction; the apply does the same for the whole ledger.
func TestApplyOverridesRacingIngestOfTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	const runID = 42
	src := schema.Provenance{Artifact: "bmk", File: "agg.json"}
	rows := []schema.StagedBenchmark{{Point: testPoint(4, 1), Source: src}, {Point: testPoint(8, 2), Source: src},
		{Point: testPoint(16, 3), Source: src}}
	ingest := func(attempt int, plan schema.OverridePlan) error {
		s := start(runID)
		s.Run.SourceRunAttempt = attempt
		tx, err := st.BeginRun(ctx, s)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		win := benchmarks.NewWinners()
		if _, err := tx.StageBenchmarks(ctx, iterate(rows), win.Add); err != nil {
			return err
		}
		if _, err := tx.Apply(ctx, nil, win.Result().Write, nil); err != nil {
			return err
		}
		if _, err := tx.ApplyRunOverrides(ctx, plan); err != nil {
			return err
		}
		if _, err := tx.UpdateLatestBenchmarks(ctx); err != nil {
			return err
		}
		return tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false)
	}
	require.NoError(t, ingest(1, schema.OverridePlan{}))

	purged := testPoint(8, 2)
	for i := range 30 {
		conclusion := []string{"failure", "success"}[i%2] // a change every time
		plan := schema.OverridePlan{
			Conclusions:  []schema.OverrideConclusion{{RunID: runID, Conclusion: conclusion}},
			PurgedPoints: []schema.OverridePoint{{RunID: runID, Point: purged, Reason: "bad point"}},
		}
		var wg sync.WaitGroup
		var ingestErr, applyErr error
		begin := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-begin
			ingestErr = ingest(2, plan.ForRun(runID))
		}()
		go func() {
			defer wg.Done()
			<-begin
			_, _, applyErr = st.ApplyOverrides(ctx, plan, false, "test")
		}()
		close(begin)
		wg.Wait()
		for what, err := range map[string]error{"ingest": ingestErr, "apply": applyErr} {
			var pgErr *pgconn.PgError
			require.False(t, errors.As(err, &pgErr) && pgErr.Code == "40P01", "round %d: %s deadlocked: %v", i, what, err)
			require.NoError(t, err, fmt.Sprintf("round %d: %s", i, what))
		}
	}
}
