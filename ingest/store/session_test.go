package store_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestSessionSettings: every connection of the store names itself
// application_name=ingest and carries the configured timeouts.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := store.OpenWith(ctx, pgtest.New(t), store.Options{LockTimeout: 2 * time.Second, StatementTimeout: 90 * time.Second}, zap.NewNop())
	require.NoError(t, err)
	defer st.Close()
	// Hold one connection so the next query opens another: each must be set.
	held, err := st.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer held.Release()
	for _, q := range []interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}{held, st.Pool()} {
		var app, lock, stmt string
		require.NoError(t, q.QueryRow(ctx, `SELECT a.application_name, current_setting('lock_timeout'), current_setting('statement_timeout')
			FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()`).Scan(&app, &lock, &stmt))
		require.Equal(t, "ingest", app)
		require.Equal(t, "2s", lock)
		require.Equal(t, "90s", stmt)
	}
	def, err := store.Open(ctx, pgtest.New(t), zap.NewNop())
	require.NoError(t, err)
	defer def.Close()
	var lock, stmt string
	require.NoError(t, def.Pool().QueryRow(ctx, `SELECT current_setting('lock_timeout'), current_setting('statement_timeout')`).Scan(&lock, &stmt))
	require.Equal(t, "10min", lock)
	require.Equal(t, "30min", stmt)
}

func TestOpenWithRejectsBadTimeouts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts store.Options
		want string
	}{
		{store.Options{LockTimeout: -time.Second}, "lock timeout: -1s is negative"},
		{store.Options{StatementTimeout: time.Microsecond}, "statement timeout: 1µs is less than 1ms (0 means no limit)"},
		{store.Options{StatementTimeout: 30 * 24 * time.Hour}, "statement timeout: 720h is more than PostgreSQL's limit"},
	} {
		_, err := store.OpenWith(t.Context(), "postgres://postgres@127.0.0.1:1/x", tt.opts, zap.NewNop())
		require.ErrorContains(t, err, tt.want)
	}
}

// holdLock opens a session named app that takes the advisory lock of run
// runID and returns its pid and a release function.
func holdLock(t *testing.T, dbURL, app string, runID int64) (int32, func()) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	require.NoError(t, err)
	cfg.RuntimeParams["application_name"] = app
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	require.NoError(t, err)
	var pid int32
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(`+store.RunLockKey+`)) l`, runID).Scan(&pid))
	released := false
	release := func() {
		if !released {
			released = true
			conn.Close(context.WithoutCancel(t.Context()))
		}
	}
	t.Cleanup(release)
	return pid, release
}

// TestRunLockTimeout: an ingest whose run is locked by another session
// logs the holder while it waits, then gives up after the lock timeout
// with an error naming the lock and the holder.
func TestRunLockTimeout(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	core, logs := observer.New(zap.InfoLevel)
	st, err := store.OpenWith(t.Context(), db, store.Options{LockTimeout: 2 * time.Second, StatementTimeout: time.Minute}, zap.New(core))
	require.NoError(t, err)
	defer st.Close()
	pid, _ := holdLock(t, db, "lock-holder-test", 42)

	began := time.Now()
	_, err = st.BeginRun(t.Context(), start(42))
	took := time.Since(began)
	want := fmt.Sprintf("timed out after 2s waiting for the advisory lock of run 42 (held by pid %d, application lock-holder-test)", pid)
	require.EqualError(t, err, want)
	var lockErr *store.LockTimeoutError
	require.True(t, errors.As(err, &lockErr))
	require.GreaterOrEqual(t, took, 2*time.Second)
	require.Less(t, took, 8*time.Second)
	waiting := logs.FilterMessage(fmt.Sprintf("waiting for the advisory lock of run 42 (held by pid %d, application lock-holder-test)", pid)).All()
	require.Len(t, waiting, 1, "one line when the wait starts (the next is due after 10s)")
	require.Equal(t, pid, waiting[0].ContextMap()["holder_pid"])
	require.Zero(t, count(t, st, "ingests"), "nothing was written")
}

// TestRunLockWaitThenProceed: when the holder lets go, the waiting ingest
// takes the lock and writes its run as usual, under the configured lock
// timeout again.
func TestRunLockWaitThenProceed(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	core, logs := observer.New(zap.InfoLevel)
	st, err := store.OpenWith(t.Context(), db, store.Options{LockTimeout: time.Minute, StatementTimeout: time.Minute}, zap.New(core))
	require.NoError(t, err)
	defer st.Close()
	_, release := holdLock(t, db, "lock-holder-test", 42)
	time.AfterFunc(time.Second, release)

	ctx := t.Context()
	tx, err := st.BeginRun(ctx, start(42))
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	require.Len(t, logs.FilterMessageSnippet("waiting for the advisory lock of run 42 (held by pid ").All(), 1)
	require.Len(t, logs.FilterMessage("got the advisory lock of run 42").All(), 1)
	win := benchmarks.NewWinners()
	_, err = tx.StageBenchmarks(ctx, iterate([]schema.StagedBenchmark{{Point: testPoint(4, 1), Source: schema.Provenance{Artifact: "a", File: "f"}}}), win.Add)
	require.NoError(t, err)
	res, err := tx.Apply(ctx, nil, win.Result().Write, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.BenchmarkNew)
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, nil, false))
	require.EqualValues(t, 1, count(t, st, "benchmark_results"))
}

// TestStatementAndRowLockTimeoutsNameTheStatement: a statement that runs
// out of time is named, not an earlier statement of the same batch.
func TestStatementAndRowLockTimeoutsNameTheStatement(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts store.Options
		want string
	}{
		{"statement timeout", store.Options{LockTimeout: time.Minute, StatementTimeout: 700 * time.Millisecond},
			"statement timeout after 700ms in write workflow run 42 attempt 1"},
		{"lock timeout", store.Options{LockTimeout: 700 * time.Millisecond, StatementTimeout: time.Minute},
			"lock timeout after 700ms in write workflow run 42 attempt 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			st, err := store.OpenWith(t.Context(), db, tt.opts, zap.NewNop())
			require.NoError(t, err)
			defer st.Close()
			ingestOnce(t, st, []schema.StagedBenchmark{{Point: testPoint(4, 1), Source: schema.Provenance{Artifact: "a", File: "f"}}}, nil)

			// Another session holds the run's row: the upsert of the next
			// ingest waits for it.
			other, err := pgx.Connect(t.Context(), db)
			require.NoError(t, err)
			defer other.Close(context.WithoutCancel(t.Context()))
			otx, err := other.Begin(t.Context())
			require.NoError(t, err)
			defer otx.Rollback(context.WithoutCancel(t.Context()))
			_, err = otx.Exec(t.Context(), `SELECT 1 FROM workflow_runs WHERE github_run_id = 42 FOR UPDATE`)
			require.NoError(t, err)

			_, err = st.BeginRun(t.Context(), start(42))
			require.EqualError(t, err, tt.want)
			require.NotContains(t, err.Error(), "work_mem")
			var te *store.TimeoutError
			require.True(t, errors.As(err, &te))
		})
	}
}

func count(t *testing.T, st *store.Store, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, st.Pool().QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n))
	return n
}

// TestRunLockWaitAcrossSlices: the wait runs in 10 s slices, each logged;
// a slice that ends without the lock leaves the transaction usable, so a
// later slice can take the lock and the run is written, or the last slice
// ends the wait at the lock timeout.
func TestRunLockWaitAcrossSlices(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		timeout     time.Duration
		releaseAt   time.Duration // 0: never
		wantWaiting int
	}{
		{"released in the second slice", time.Minute, 11 * time.Second, 2},
		{"timed out in the second slice", 12 * time.Second, 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			core, logs := observer.New(zap.InfoLevel)
			st, err := store.OpenWith(t.Context(), db, store.Options{LockTimeout: tt.timeout, StatementTimeout: time.Minute}, zap.New(core))
			require.NoError(t, err)
			defer st.Close()
			pid, release := holdLock(t, db, "lock-holder-test", 42)
			if tt.releaseAt > 0 {
				time.AfterFunc(tt.releaseAt, release)
			}
			ctx := t.Context()
			began := time.Now()
			tx, err := st.BeginRun(ctx, start(42))
			took := time.Since(began)
			require.Len(t, logs.FilterMessageSnippet("waiting for the advisory lock of run 42 (held by pid ").All(), tt.wantWaiting)
			if tt.releaseAt == 0 {
				require.EqualError(t, err, fmt.Sprintf("timed out after 12s waiting for the advisory lock of run 42 (held by pid %d, application lock-holder-test)", pid))
				require.GreaterOrEqual(t, took, tt.timeout)
				require.Less(t, took, tt.timeout+5*time.Second)
				return
			}
			require.NoError(t, err)
			defer tx.Rollback(ctx)
			require.GreaterOrEqual(t, took, tt.releaseAt)
			win := benchmarks.NewWinners()
			_, err = tx.StageBenchmarks(ctx, iterate([]schema.StagedBenchmark{{Point: testPoint(4, 1), Source: schema.Provenance{Artifact: "a", File: "f"}}}), win.Add)
			require.NoError(t, err)
			_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
			require.NoError(t, err)
			require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, nil, false))
			require.EqualValues(t, 1, count(t, st, "benchmark_results"))
		})
	}
}
