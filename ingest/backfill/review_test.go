package backfill_test

// Review findings on the backfill worker: each test states what the
// README promises and fails while the code breaks it. The queue is the
// real PostgreSQL store; GitHub and the ingest are stand-ins at the
// worker's own interfaces (RunFetcher, Source, Ingester).

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

const reviewRepo = "SemiAnalysisAI/InferenceX"

func reviewStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), db, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// reviewIngester records the runs it is asked to ingest and reports each
// as a successful ingest (no ledger row: IngestID 0).
type reviewIngester struct {
	mu    sync.Mutex
	calls []ingest.Config
	// before runs before each ingest returns.
	before func(ctx context.Context, n int)
}

func (r *reviewIngester) ingest(ctx context.Context, cfg ingest.Config, _ string) (*schema.Summary, error) {
	r.mu.Lock()
	r.calls = append(r.calls, cfg)
	n := len(r.calls)
	r.mu.Unlock()
	if r.before != nil {
		r.before(ctx, n)
	}
	return &schema.Summary{Status: schema.StatusSucceeded, Run: cfg.Run}, nil
}

// reviewRerunFetcher is GitHub where run 1001 was listed completed at
// attempt 1, then re-run: when it is fetched, attempt 2 is in progress.
type reviewRerunFetcher struct{ dir string }

func (f reviewRerunFetcher) ListRuns(context.Context, github.RunFilter) ([]github.ListedRun, error) {
	return []github.ListedRun{{ID: 1001, Attempt: 1, Status: "completed", Conclusion: "failure",
		CreatedAt: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}}, nil
}

func (f reviewRerunFetcher) GetRun(_ context.Context, id int64) (github.Run, error) {
	return github.Run{Meta: schema.RunMeta{RunID: id, RunAttempt: 2, Status: "in_progress"}}, nil
}

// Fetch refuses an attempt in progress when asked to, as Client.Fetch
// does, before any download.
func (f reviewRerunFetcher) Fetch(ctx context.Context, req github.Request) (*github.Result, error) {
	run, _ := f.GetRun(ctx, req.SourceRunID)
	if req.RequireCompleted && run.Meta.Status != "completed" {
		return nil, &github.NotCompletedError{RunID: run.Meta.RunID, Attempt: run.Meta.RunAttempt, Status: run.Meta.Status}
	}
	return &github.Result{Dir: f.dir, Source: run, Merge: run, Meta: run.Meta}, nil
}

func (f reviewRerunFetcher) Discard(*github.Result) error { return nil }

// TestReviewRunRerunInProgressBeforeFetch: "A run still in progress is
// skipped with its status; a run re-run since it was listed is fetched at
// its new attempt". When the re-run is still in progress at fetch time,
// GitHubSource.Fetch does not look at the status: the worker ingests the
// half-finished attempt 2 (whose listing still holds attempt 1's
// artifacts) and the ledger then shows attempt 2 done, so no later
// backfill ingests the finished attempt 2.
func TestReviewRunRerunInProgressBeforeFetch(t *testing.T) {
	st := reviewStore(t, pgtest.New(t))
	ing := &reviewIngester{}
	src := &backfill.GitHubSource{Client: reviewRerunFetcher{dir: t.TempDir()}, Log: zaptest.NewLogger(t)}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: reviewRepo, Source: "github"},
		Worker: "review", Log: zaptest.NewLogger(t)}, st, src, ing.ingest)
	require.NoError(t, err)
	require.Empty(t, ing.calls, "an in-progress attempt was ingested")
	require.Zero(t, res.Totals.Ingested)
}

// reviewListSource lists fixed runs and hands over an empty tree.
type reviewListSource struct {
	runs []schema.BackfillRun
	dir  string
}

func (s reviewListSource) List(context.Context) ([]schema.BackfillRun, error) {
	return append([]schema.BackfillRun(nil), s.runs...), nil
}

func (s reviewListSource) Fetch(_ context.Context, run schema.BackfillRun) (*backfill.Fetched, error) {
	return &backfill.Fetched{Dir: s.dir, Attempt: run.Attempt, Configure: func(cfg *ingest.Config) { cfg.Run.SourceRunID = run.RunID }}, nil
}

// reviewProgress records the ETA of every settled run.
type reviewProgress struct {
	mu   sync.Mutex
	etas []time.Duration
}

func (p *reviewProgress) Start(schema.BackfillPass, schema.BackfillCounts) {}
func (p *reviewProgress) Working(schema.BackfillRun)                       {}
func (p *reviewProgress) Finish(schema.BackfillCounts)                     {}
func (p *reviewProgress) Settled(_ schema.BackfillRun, _ schema.BackfillOutcome, _ *schema.Summary, _ schema.BackfillCounts, eta time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.etas = append(p.etas, eta)
}

// reviewClock is a clock that moves only when told.
type reviewClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *reviewClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *reviewClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestReviewETACountsRunsQueuedSettled: the ETA is "from the pass's pace
// since this worker started". Runs that another worker queues already
// settled (its listing's runs the ledger shows ingested — e.g. runs that
// completed, and that CI ingested, after this worker listed) count as
// done work: one ingest of a minute and 100 such runs make the pace 101
// runs a minute, and the ETA of the one run left (a minute's work) is
// under a second.
func TestReviewETACountsRunsQueuedSettled(t *testing.T) {
	db := pgtest.New(t)
	st := reviewStore(t, db)
	clock := &reviewClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	prog := &reviewProgress{}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	src := reviewListSource{dir: t.TempDir(), runs: []schema.BackfillRun{
		{RunID: 1, Attempt: 1, CreatedAt: base}, {RunID: 2, Attempt: 1, CreatedAt: base.Add(time.Hour)}}}
	ing := &reviewIngester{before: func(ctx context.Context, n int) {
		clock.advance(time.Minute) // every ingest takes a minute
		if n != 1 {
			return
		}
		// Meanwhile another worker of the pass queues 100 runs that the
		// ledger shows ingested.
		var passID int64
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT id FROM backfills`).Scan(&passID))
		var settled []schema.BackfillRun
		for i := range 100 {
			settled = append(settled, schema.BackfillRun{RunID: int64(100 + i), Attempt: 1, CreatedAt: base.Add(-time.Hour),
				State: schema.BackfillSkipped, Detail: "attempt 1 already ingested"})
		}
		_, err := st.EnqueueBackfill(ctx, passID, settled)
		require.NoError(t, err)
	}}
	_, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: reviewRepo, Source: "review-eta"},
		Worker: "review", Progress: prog, Log: zaptest.NewLogger(t), Now: clock.Now}, st, src, ing.ingest)
	require.NoError(t, err)
	require.Len(t, prog.etas, 2)
	require.GreaterOrEqual(t, prog.etas[0], 30*time.Second,
		"one run left at a minute a run: the ETA after the first run is %s", prog.etas[0])
}

// TestReviewClaimSurvivesIdleInTransactionTimeout: the claiming
// transaction sits idle while the run is fetched and ingested on other
// connections. A server (or role, or database) with
// idle_in_transaction_session_timeout — common on managed PostgreSQL —
// kills that session when an ingest takes longer: the ingest commits, the
// outcome cannot be recorded, and the worker stops with an error. The
// claim should set the timeout off for its own transaction, as it sets
// TCP keepalives.
func TestReviewClaimSurvivesIdleInTransactionTimeout(t *testing.T) {
	db := pgtest.New(t)
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	var name string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&name))
	_, err = conn.Exec(t.Context(), fmt.Sprintf(`ALTER DATABASE %s SET idle_in_transaction_session_timeout = '300ms'`, pgx.Identifier{name}.Sanitize()))
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))

	st := reviewStore(t, db)
	src := reviewListSource{dir: t.TempDir(), runs: []schema.BackfillRun{{RunID: 1, Attempt: 1}}}
	ing := &reviewIngester{before: func(context.Context, int) {
		// The ingest outlasts the server's idle-in-transaction timeout.
		// This waits on the server's timer; nothing asserts a duration.
		time.Sleep(time.Second)
	}}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: reviewRepo, Source: "review-idle"},
		Worker: "review", Log: zaptest.NewLogger(t)}, st, src, ing.ingest)
	require.NoError(t, err, "the outcome of an ingest longer than idle_in_transaction_session_timeout could not be recorded")
	require.Equal(t, 1, res.Totals.Ingested)
}

// TestReviewReingestWorkerListingPastTheEnd: "Start as many `ingest
// backfill` processes with the same parameters as you like … PostgreSQL
// shares the work", and --reingest ingests every run again "once per
// backfill". A worker started with the others but whose listing ends after
// they have finished the pass finds no active pass, begins a new one with
// a new ledger mark, and ingests every run a second time.
func TestReviewReingestWorkerListingPastTheEnd(t *testing.T) {
	st := reviewStore(t, pgtest.New(t))
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	runs := []schema.BackfillRun{{RunID: 1, Attempt: 1, CreatedAt: base}, {RunID: 2, Attempt: 1, CreatedAt: base.Add(time.Hour)}}
	params := backfill.Params{Repo: reviewRepo, Source: "review-late", Reingest: true}
	ing := &reviewIngester{}
	firstDone := make(chan struct{})
	slow := &reviewSlowSource{reviewListSource: reviewListSource{runs: runs, dir: t.TempDir()}, wait: firstDone}

	// Both workers start together; the second one's listing is slower.
	var wg sync.WaitGroup
	var errB error
	wg.Go(func() {
		_, errB = backfill.Run(t.Context(), backfill.Options{Params: params, Worker: "B", Log: zaptest.NewLogger(t)}, st, slow, ing.ingest)
	})
	resA, err := backfill.Run(t.Context(), backfill.Options{Params: params, Worker: "A", Log: zaptest.NewLogger(t)},
		st, reviewListSource{runs: runs, dir: t.TempDir()}, ing.ingest)
	require.NoError(t, err)
	require.True(t, resA.Finished)
	close(firstDone)
	wg.Wait()
	require.NoError(t, errB)
	require.Len(t, ing.calls, len(runs), "two workers of one reingest backfill ingested each run %d times", len(ing.calls)/len(runs))
}

// reviewSlowSource lists once wait is closed.
type reviewSlowSource struct {
	reviewListSource
	wait chan struct{}
}

func (s *reviewSlowSource) List(ctx context.Context) ([]schema.BackfillRun, error) {
	select {
	case <-s.wait:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.reviewListSource.List(ctx)
}
