package backfill_test

// The backfill worker with stand-ins: the queue is the real PostgreSQL
// store; GitHub and the ingest are stand-ins at the worker's own
// interfaces (RunFetcher, Source, Ingester).

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

const stubRepo = "SemiAnalysisAI/InferenceX"

func stubStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), db, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// stubIngester records the runs it is asked to ingest and reports each
// as a successful ingest (no ledger row: IngestID 0).
type stubIngester struct {
	mu    sync.Mutex
	calls []ingest.Config
	// before runs before each ingest returns.
	before func(ctx context.Context, n int)
}

func (r *stubIngester) ingest(ctx context.Context, cfg ingest.Config, _ string) (*schema.Summary, error) {
	r.mu.Lock()
	r.calls = append(r.calls, cfg)
	n := len(r.calls)
	r.mu.Unlock()
	if r.before != nil {
		r.before(ctx, n)
	}
	return &schema.Summary{Status: schema.StatusSucceeded, Run: cfg.Run}, nil
}

// rerunFetcher is GitHub where run 1001 was listed completed at
// attempt 1, then re-run: when it is fetched, attempt 2 is in progress.
type rerunFetcher struct{ dir string }

func (f rerunFetcher) ListRuns(context.Context, github.RunFilter) ([]github.ListedRun, error) {
	return []github.ListedRun{{ID: 1001, Attempt: 1, Status: "completed", Conclusion: "failure",
		CreatedAt: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}}, nil
}

func (f rerunFetcher) GetRun(_ context.Context, id int64) (github.Run, error) {
	return github.Run{Meta: schema.RunMeta{RunID: id, RunAttempt: 2, Status: "in_progress"}}, nil
}

// Fetch refuses an attempt in progress when asked to, as Client.Fetch
// does, before any download.
func (f rerunFetcher) Fetch(ctx context.Context, req github.Request) (*github.Result, error) {
	run, _ := f.GetRun(ctx, req.SourceRunID)
	if req.RequireCompleted && run.Meta.Status != "completed" {
		return nil, &github.NotCompletedError{RunID: run.Meta.RunID, Attempt: run.Meta.RunAttempt, Status: run.Meta.Status}
	}
	return &github.Result{Dir: f.dir, Source: run, Merge: run, Meta: run.Meta}, nil
}

func (f rerunFetcher) Discard(*github.Result) error { return nil }

// TestRunRerunInProgressAtFetch: a run listed completed and re-run before it is fetched is skipped
// while the new attempt is in progress: its listing still holds the previous attempt's artifacts,
// and an ingest would record the new attempt as done before it is.
func TestRunRerunInProgressAtFetch(t *testing.T) {
	t.Parallel()
	st := stubStore(t, pgtest.New(t))
	ing := &stubIngester{}
	src := &backfill.GitHubSource{Client: rerunFetcher{dir: t.TempDir()}, Log: zaptest.NewLogger(t)}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: stubRepo, Source: "github"},
		Worker: "test", Log: zaptest.NewLogger(t)}, st, src, ing.ingest)
	require.NoError(t, err)
	require.Empty(t, ing.calls, "an in-progress attempt was ingested")
	require.Zero(t, res.Totals.Ingested)
}

// listSource lists fixed runs and hands over an empty tree.
type listSource struct {
	runs []schema.BackfillRun
	dir  string
}

func (s listSource) List(context.Context) ([]schema.BackfillRun, error) {
	return append([]schema.BackfillRun(nil), s.runs...), nil
}

func (s listSource) Fetch(_ context.Context, run schema.BackfillRun) (*backfill.Fetched, error) {
	return &backfill.Fetched{Dir: s.dir, Attempt: run.Attempt, Configure: func(cfg *ingest.Config) { cfg.Run.SourceRunID = run.RunID }}, nil
}

// etaProgress records the ETA of every settled run.
type etaProgress struct {
	mu   sync.Mutex
	etas []time.Duration
}

func (p *etaProgress) Start(schema.BackfillPass, schema.BackfillCounts) {}
func (p *etaProgress) Working(schema.BackfillRun)                       {}
func (p *etaProgress) Finish(schema.BackfillCounts)                     {}
func (p *etaProgress) Settled(_ schema.BackfillRun, _ schema.BackfillOutcome, _ *schema.Summary, _ schema.BackfillCounts, eta time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.etas = append(p.etas, eta)
}

// manualClock is a clock that moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestETAIgnoresRunsQueuedSettled: the ETA follows the pace of the runs workers fetch: runs
// another worker queues already settled (its listing's runs the ledger shows ingested) are no work
// done, so one ingest of a minute and 100 such runs still give a minute or so for the one run
// left.
func TestETAIgnoresRunsQueuedSettled(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	st := stubStore(t, db)
	clock := &manualClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	prog := &etaProgress{}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	src := listSource{dir: t.TempDir(), runs: []schema.BackfillRun{
		{RunID: 1, Attempt: 1, CreatedAt: base}, {RunID: 2, Attempt: 1, CreatedAt: base.Add(time.Hour)}}}
	ing := &stubIngester{before: func(ctx context.Context, n int) {
		clock.advance(time.Minute) // every ingest takes a minute
		if n != 1 {
			return
		}
		// Meanwhile another worker of the pass queues 100 runs that the
		// ledger shows ingested.
		var passID int64
		require.NoError(t, pgtest.Pool(t, db).QueryRow(ctx, `SELECT id FROM backfills`).Scan(&passID))
		var settled []schema.BackfillRun
		for i := range 100 {
			settled = append(settled, schema.BackfillRun{RunID: int64(100 + i), Attempt: 1, CreatedAt: base.Add(-time.Hour),
				State: schema.BackfillSkipped, Detail: "attempt 1 already ingested"})
		}
		_, err := st.EnqueueBackfill(ctx, passID, settled)
		require.NoError(t, err)
	}}
	_, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: stubRepo, Source: "eta"},
		Worker: "test", Progress: prog, Log: zaptest.NewLogger(t), Now: clock.Now}, st, src, ing.ingest)
	require.NoError(t, err)
	require.Len(t, prog.etas, 2)
	require.GreaterOrEqual(t, prog.etas[0], 30*time.Second,
		"one run left at a minute a run: the ETA after the first run is %s", prog.etas[0])
}

// TestClaimSurvivesIdleInTransactionTimeout: the claiming transaction sits idle while the run is
// fetched and ingested on other connections; a database with idle_in_transaction_session_timeout
// (common on managed PostgreSQL) does not end it, since the claim turns the timeout off for its
// own transaction.
func TestClaimSurvivesIdleInTransactionTimeout(t *testing.T) {
	// Not parallel: an idle-in-transaction timeout of milliseconds must
	// not be reached by the claim's own statements on a busy machine.
	db := pgtest.New(t)
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	var name string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&name))
	_, err = conn.Exec(t.Context(), fmt.Sprintf(`ALTER DATABASE %s SET idle_in_transaction_session_timeout = '300ms'`, pgx.Identifier{name}.Sanitize()))
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))

	st := stubStore(t, db)
	src := listSource{dir: t.TempDir(), runs: []schema.BackfillRun{{RunID: 1, Attempt: 1}}}
	ing := &stubIngester{before: func(context.Context, int) {
		// The ingest outlasts the server's idle-in-transaction timeout.
		// This waits on the server's timer; nothing asserts a duration.
		time.Sleep(time.Second)
	}}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: stubRepo, Source: "idle"},
		Worker: "test", Log: zaptest.NewLogger(t)}, st, src, ing.ingest)
	require.NoError(t, err, "the outcome of an ingest longer than idle_in_transaction_session_timeout could not be recorded")
	require.Equal(t, 1, res.Totals.Ingested)
}

// TestReingestWorkerListingPastTheEnd: a --reingest worker whose listing ends after the other
// workers finished the pass joined that pass before listing, so it does not begin a new one and
// ingest every run a second time.
func TestReingestWorkerListingPastTheEnd(t *testing.T) {
	t.Parallel()
	st := stubStore(t, pgtest.New(t))
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	runs := []schema.BackfillRun{{RunID: 1, Attempt: 1, CreatedAt: base}, {RunID: 2, Attempt: 1, CreatedAt: base.Add(time.Hour)}}
	params := backfill.Params{Repo: stubRepo, Source: "late", Reingest: true}
	ing := &stubIngester{}
	firstDone := make(chan struct{})
	slow := &slowSource{listSource: listSource{runs: runs, dir: t.TempDir()}, wait: firstDone}

	// Both workers start together; the second one's listing is slower.
	var wg sync.WaitGroup
	var errB error
	wg.Go(func() {
		_, errB = backfill.Run(t.Context(), backfill.Options{Params: params, Worker: "B", Log: zaptest.NewLogger(t)}, st, slow, ing.ingest)
	})
	resA, err := backfill.Run(t.Context(), backfill.Options{Params: params, Worker: "A", Log: zaptest.NewLogger(t)},
		st, listSource{runs: runs, dir: t.TempDir()}, ing.ingest)
	require.NoError(t, err)
	require.True(t, resA.Finished)
	close(firstDone)
	wg.Wait()
	require.NoError(t, errB)
	require.Len(t, ing.calls, len(runs), "two workers of one reingest backfill ingested each run %d times", len(ing.calls)/len(runs))
}

// slowSource lists once wait is closed.
type slowSource struct {
	listSource
	wait chan struct{}
}

func (s *slowSource) List(ctx context.Context) ([]schema.BackfillRun, error) {
	select {
	case <-s.wait:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.listSource.List(ctx)
}
