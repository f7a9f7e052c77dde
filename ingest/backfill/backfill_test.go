package backfill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

const testRepo = "SemiAnalysisAI/InferenceX"

// env is one test's database, its run trees and the ingest a worker runs.
type env struct {
	t    *testing.T
	st   *store.Store
	url  string
	db   *pgxpool.Pool // the test's own queries
	root string
	log  *zap.Logger
	cat  *catalog.Catalog
	// ingest is the Ingester of `ingest backfill`: source.Open and
	// ingest.Run with the default catalog and overrides.
	ingest backfill.Ingester
}

func newEnv(t *testing.T) *env {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	url := pgtest.New(t)
	st, err := store.Open(context.Background(), url, log)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	cat, err := catalog.Default()
	require.NoError(t, err)
	ov, err := overrides.Load()
	require.NoError(t, err)
	e := &env{t: t, st: st, url: url, db: pgtest.Pool(t, url), root: t.TempDir(), log: log, cat: cat}
	e.ingest = e.ingester(ov)
	return e
}

// ingester is the Ingester of `ingest backfill` with the given run
// overrides: source.Open and ingest.Run.
func (e *env) ingester(ov *overrides.Overrides) backfill.Ingester {
	deps := ingest.Deps{Store: ingest.AdaptStore[*store.RunTx](e.st), Catalog: e.cat, Normalizer: benchmark.NewNormalizer(e.cat),
		Overrides: ov, Log: e.log, Now: time.Now}
	return func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		tree, err := source.Open(ctx, dir, e.log)
		if err != nil {
			return nil, err
		}
		defer tree.Close()
		return ingest.Run(ctx, cfg, tree, deps)
	}
}

var base = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// tree writes a generated run tree under the root, named by the run id,
// created at base plus hour hours.
func (e *env) tree(id int64, attempt, hour int) string {
	e.t.Helper()
	dir := filepath.Join(e.root, fmt.Sprint(id))
	require.NoError(e.t, os.RemoveAll(dir))
	_, err := generate.Write(dir, generate.Options{Points: 4, RunID: id, Attempt: attempt, Seed: id % 1000})
	require.NoError(e.t, err)
	// Generated trees share one creation time: give each its own.
	path := filepath.Join(dir, "artifacts.json")
	raw, err := os.ReadFile(path)
	require.NoError(e.t, err)
	var listing map[string]any
	require.NoError(e.t, json.Unmarshal(raw, &listing))
	listing["run"].(map[string]any)["created_at"] = base.Add(time.Duration(hour) * time.Hour).Format(time.RFC3339)
	raw, err = json.Marshal(listing)
	require.NoError(e.t, err)
	require.NoError(e.t, os.WriteFile(path, raw, 0o644))
	return dir
}

func (e *env) params(reingest bool) backfill.Params {
	return backfill.Params{Repo: testRepo, Source: "dir", Dir: e.root, Reingest: reingest}
}

func (e *env) options(reingest bool, p backfill.Progress) backfill.Options {
	return backfill.Options{Params: e.params(reingest), Worker: "test", Log: e.log, Progress: p,
		Config: ingest.Config{Run: schema.RunIdentity{Repo: testRepo}, Target: "test", ToolVersion: "test"}}
}

// run is one worker over the root's trees.
func (e *env) run(ctx context.Context, reingest bool, p backfill.Progress, src backfill.Source) (*backfill.Result, error) {
	e.t.Helper()
	if p == nil {
		p = &recorder{}
	}
	if src == nil {
		src = &backfill.DirSource{Dir: e.root, Log: e.log}
	}
	return backfill.Run(ctx, e.options(reingest, p), e.st, src, e.ingest)
}

func (e *env) mustRun(reingest bool) (*backfill.Result, *recorder) {
	e.t.Helper()
	rec := &recorder{}
	res, err := e.run(context.Background(), reingest, rec, nil)
	require.NoError(e.t, err)
	require.False(e.t, res.Interrupted)
	return res, rec
}

// ledgerRow is one row of the ledger.
type ledgerRow struct {
	RunID   int64
	Attempt int
	Status  string
}

// ledger is every ledger row in ledger order.
func (e *env) ledger() []ledgerRow {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `SELECT github_run_id, run_attempt, status FROM ingests ORDER BY id`)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []ledgerRow
	for rows.Next() {
		var r ledgerRow
		require.NoError(e.t, rows.Scan(&r.RunID, &r.Attempt, &r.Status))
		out = append(out, r)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// settled is one Settled call of a Progress.
type settled struct {
	RunID int64
	State schema.BackfillState
}

// recorder is a Progress that records what it is told, and cancels a
// context once as many runs as cancelAfter have been settled.
type recorder struct {
	started     bool
	finished    bool
	settled     []settled
	cancelAfter int
	cancel      context.CancelFunc
}

func (r *recorder) Start(schema.BackfillPass, schema.BackfillCounts) { r.started = true }
func (r *recorder) Working(schema.BackfillRun)                       {}
func (r *recorder) Settled(run schema.BackfillRun, out schema.BackfillOutcome, _ *schema.Summary, _ schema.BackfillCounts, _ time.Duration) {
	r.settled = append(r.settled, settled{run.RunID, out.State})
	if r.cancel != nil && len(r.settled) == r.cancelAfter {
		r.cancel()
	}
}
func (r *recorder) Finish(schema.BackfillCounts) { r.finished = true }

func (r *recorder) runs(state schema.BackfillState) []int64 {
	var out []int64
	for _, s := range r.settled {
		if s.State == state {
			out = append(out, s.RunID)
		}
	}
	return out
}

func succeeded(runs ...int64) []ledgerRow {
	out := make([]ledgerRow, len(runs))
	for i, id := range runs {
		out[i] = ledgerRow{RunID: id, Attempt: 1, Status: string(schema.StatusSucceeded)}
	}
	return out
}

// Run ids run against creation time, so that the order of the ledger
// shows the queue serves the oldest run first.
const (
	runOld = int64(30000000300)
	runMid = int64(30000000200)
	runNew = int64(30000000100)
)

func (e *env) threeTrees() {
	e.tree(runOld, 1, 0)
	e.tree(runMid, 1, 1)
	e.tree(runNew, 1, 2)
}

func TestRunIngestsEveryRunOnceOldestFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.threeTrees()
	require.NoError(t, os.MkdirAll(filepath.Join(e.root, "not-a-run"), 0o755))

	res, rec := e.mustRun(false)
	require.True(t, res.Pass.Created)
	require.Equal(t, 3, res.Listed, "a directory that names no run is left out")
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillPending: 3}, res.Queued)
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 3, Worked: 3}, res.Counts)
	require.True(t, res.Finished)
	require.Empty(t, res.Failures)
	require.Equal(t, 3, res.Totals.Ingested)
	require.Equal(t, 3, res.Totals.Runs())
	require.EqualValues(t, 12, res.Totals.Rows.Benchmark.New)
	require.True(t, rec.started)
	require.True(t, rec.finished)
	require.Equal(t, []int64{runOld, runMid, runNew}, rec.runs(schema.BackfillIngested))
	require.Equal(t, succeeded(runOld, runMid, runNew), e.ledger(), "one ingest per run, oldest first")

	var out strings.Builder
	require.NoError(t, backfill.WriteResult(&out, res, "test"))
	require.Contains(t, out.String(), "This worker listed 3 runs and queued 3.")
	require.Contains(t, out.String(), "The pass, every worker: 3 runs: 3 ingested, 0 skipped, 0 failed, 0 pending: finished.")
	require.NotContains(t, out.String(), "Failed runs")

	// Again: a new pass, every run settled at enqueue; nothing ingested.
	again, rec := e.mustRun(false)
	require.True(t, again.Pass.Created)
	require.NotEqual(t, res.Pass.ID, again.Pass.ID)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillSkipped: 3}, again.Queued)
	require.Equal(t, schema.BackfillCounts{Total: 3, Skipped: 3}, again.Counts)
	require.True(t, again.Finished)
	require.Zero(t, again.Totals.Runs(), "the worker claimed nothing")
	require.Empty(t, rec.settled)
	require.Len(t, e.ledger(), 3, "nothing ingested again")
}

func TestRunFailedRunIsRetriedByTheNextPass(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.threeTrees()
	// Malformed reuse metadata aborts the ingest (as a malformed
	// artifacts.json does).
	broken := filepath.Join(e.root, fmt.Sprint(runMid), "reused-ingest-metadata", "reuse_source_run.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(broken), 0o755))
	require.NoError(t, os.WriteFile(broken, []byte(`{"source_run_id": `), 0o644))

	rec := &recorder{}
	res, err := e.run(context.Background(), false, rec, nil)
	require.NoError(t, err, "a failed run does not fail the worker")
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 2, Failed: 1, Worked: 3}, res.Counts)
	require.True(t, res.Finished, "the pass finishes with the failed run")
	require.Equal(t, 1, res.Totals.Failed)
	require.Equal(t, []int64{runMid}, rec.runs(schema.BackfillFailed))
	var out strings.Builder
	require.NoError(t, backfill.WriteResult(&out, res, "test"))
	require.Len(t, res.Failures, 1)
	require.Equal(t, runMid, res.Failures[0].RunID)
	require.Contains(t, res.Failures[0].Detail, "ingest: ")
	require.Contains(t, res.Failures[0].Detail, "reuse")
	require.Equal(t, schema.StatusAborted, res.Failures[0].IngestStatus)

	require.Contains(t, out.String(), "Failed runs (a later pass retries them):\n  run "+fmt.Sprint(runMid)+" attempt ")
	require.Contains(t, out.String(), res.Failures[0].Detail)
	for _, r := range e.ledger() {
		if r.RunID == runMid {
			require.NotEqual(t, string(schema.StatusSucceeded), r.Status, "the broken run wrote no successful ingest")
		}
	}

	// Within the pass, the failed run is not retried: a second worker of
	// the same (finished) pass begins a new one. Mend the tree first.
	e.tree(runMid, 1, 1)
	next, rec := e.mustRun(false)
	require.NotEqual(t, res.Pass.ID, next.Pass.ID)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillPending: 1, schema.BackfillSkipped: 2}, next.Queued)
	require.Equal(t, []int64{runMid}, rec.runs(schema.BackfillIngested))
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 1, Skipped: 2, Worked: 1}, next.Counts)
	require.True(t, next.Finished)
	require.Empty(t, next.Failures)
	var ok []int64
	for _, r := range e.ledger() {
		if r.Status == string(schema.StatusSucceeded) {
			ok = append(ok, r.RunID)
		}
	}
	require.Equal(t, []int64{runOld, runNew, runMid}, ok, "each run ingested once")
}

func TestRunReingestsEachRunOnceAcrossAnInterruption(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.threeTrees()
	e.mustRun(false)
	require.Len(t, e.ledger(), 3)

	// A reingest worker interrupted after its first settled run.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{cancelAfter: 1, cancel: cancel}
	res, err := e.run(ctx, true, rec, nil)
	require.NoError(t, err)
	require.True(t, res.Interrupted)
	require.True(t, res.Pass.Reingest)
	require.False(t, res.Finished)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillPending: 3}, res.Queued, "a reingest queues runs the ledger holds")
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 1, Pending: 2, Worked: 1}, res.Counts)
	require.Equal(t, []int64{runOld}, rec.runs(schema.BackfillIngested))
	var out strings.Builder
	require.NoError(t, backfill.WriteResult(&out, res, "test"))
	require.Contains(t, out.String(), "(reingest): worker test, interrupted")
	require.Contains(t, out.String(), ": not finished (")

	// A reingest worker whose ingest committed but that died before it
	// settled the run: the run is pending again with a ledger row newer
	// than the pass's mark.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	src := &backfill.DirSource{Dir: e.root, Log: e.log}
	died := *e
	died.ingest = func(c context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		sum, err := e.ingest(c, cfg, dir)
		cancel()
		return sum, err
	}
	res2, err := backfill.Run(ctx, e.options(true, &recorder{}), e.st, src, died.ingest)
	require.NoError(t, err)
	require.True(t, res2.Interrupted)
	require.Equal(t, res.Pass.ID, res2.Pass.ID, "the worker joined the interrupted pass")
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 1, Pending: 2, Worked: 1}, res2.Counts, "the run was given back")

	// The rest of the pass: the run ingested before the death is skipped,
	// the last one ingested.
	res3, rec := e.mustRun(true)
	require.Equal(t, res.Pass.ID, res3.Pass.ID)
	require.False(t, res3.Pass.Created)
	require.Empty(t, res3.Queued, "every run was queued already")
	require.Equal(t, []int64{runMid}, rec.runs(schema.BackfillSkipped))
	require.Equal(t, []int64{runNew}, rec.runs(schema.BackfillIngested))
	require.Equal(t, schema.BackfillCounts{Total: 3, Ingested: 2, Skipped: 1, Worked: 2}, res3.Counts)
	require.True(t, res3.Finished)
	require.Equal(t, succeeded(runOld, runMid, runNew, runOld, runMid, runNew), e.ledger(),
		"the reingest ingested each run exactly once more, oldest first")
}

// queueThenInterrupt queues the root's runs in a pass and stops before any
// claim.
func (e *env) queueThenInterrupt() *backfill.Result {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := e.run(ctx, false, &cancelOnStart{cancel: cancel}, nil)
	require.NoError(e.t, err)
	require.True(e.t, res.Interrupted)
	require.Zero(e.t, res.Totals.Runs())
	return res
}

func (e *env) queuedAttempt(passID, runID int64) int {
	e.t.Helper()
	var attempt int
	require.NoError(e.t, e.db.QueryRow(context.Background(),
		`SELECT run_attempt FROM backfill_runs WHERE backfill_id = $1 AND github_run_id = $2`, passID, runID).Scan(&attempt))
	return attempt
}

// A run queued at attempt 1 whose tree holds attempt 2 when it is claimed
// (re-run and downloaded again since) is worked on as attempt 2.
func TestRunTakesTheAttemptOfTheTree(t *testing.T) {
	t.Parallel()
	attempt2 := []ledgerRow{{RunID: runOld, Attempt: 2, Status: string(schema.StatusSucceeded)}}
	t.Run("ingested", func(t *testing.T) {
		e := newEnv(t)
		e.tree(runOld, 1, 0)
		queued := e.queueThenInterrupt()
		require.Equal(t, 1, e.queuedAttempt(queued.Pass.ID, runOld))

		e.tree(runOld, 2, 0)
		res, rec := e.mustRun(false)
		require.Equal(t, queued.Pass.ID, res.Pass.ID)
		require.Equal(t, []int64{runOld}, rec.runs(schema.BackfillIngested))
		require.Equal(t, attempt2, e.ledger())
		require.Equal(t, 2, e.queuedAttempt(res.Pass.ID, runOld), "the queue records the attempt ingested")

		// The next pass lists attempt 2, which the ledger holds.
		next, _ := e.mustRun(false)
		require.Equal(t, map[schema.BackfillState]int64{schema.BackfillSkipped: 1}, next.Queued)
		require.Equal(t, attempt2, e.ledger())
	})
	t.Run("already ingested", func(t *testing.T) {
		e := newEnv(t)
		e.tree(runOld, 1, 0)
		queued := e.queueThenInterrupt()

		// Attempt 2 is ingested by other means (`ingest load`) meanwhile.
		dir := e.tree(runOld, 2, 0)
		_, err := e.ingest(context.Background(), ingest.Config{Run: schema.RunIdentity{Repo: testRepo}, Target: "test"}, dir)
		require.NoError(t, err)
		require.Equal(t, attempt2, e.ledger())

		res, rec := e.mustRun(false)
		require.Equal(t, queued.Pass.ID, res.Pass.ID)
		require.Equal(t, []int64{runOld}, rec.runs(schema.BackfillSkipped))
		require.Equal(t, attempt2, e.ledger(), "attempt 2 is not ingested twice")
		skipped, err := e.st.BackfillSettled(context.Background(), res.Pass.ID, schema.BackfillSkipped)
		require.NoError(t, err)
		require.Len(t, skipped, 1)
		require.Equal(t, 2, skipped[0].Attempt)
		require.Contains(t, skipped[0].Detail, "already ingested: attempt 2")
	})
}

func TestRunSkipsATreeWithoutListingOnceIngested(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := e.tree(runOld, 0, 0)
	require.NoError(t, os.Remove(filepath.Join(dir, "artifacts.json")))

	first, _ := e.mustRun(false)
	require.Equal(t, schema.BackfillCounts{Total: 1, Ingested: 1, Worked: 1}, first.Counts)
	require.Equal(t, succeeded(runOld), e.ledger(), "a tree without attempt is ingested as attempt 1")

	next, rec := e.mustRun(false)
	require.Equal(t, schema.BackfillCounts{Total: 1, Skipped: 1}, next.Counts)
	require.Empty(t, rec.runs(schema.BackfillIngested))
	require.Len(t, e.ledger(), 1, "the run is not ingested again")
}

// cancelOnStart cancels the worker's context as soon as the runs are
// queued.
type cancelOnStart struct {
	recorder
	cancel context.CancelFunc
}

func (c *cancelOnStart) Start(schema.BackfillPass, schema.BackfillCounts) { c.cancel() }

// TestRunLostClaimDoesNotCommit: a worker whose claim dies while it
// ingests (its session terminated, as an idle timeout or a network cut
// would) must not commit the run, since another worker may claim it: the
// ingest is aborted before its commit, the worker stops, and the next
// worker ingests the run once.
func TestRunLostClaimDoesNotCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.threeTrees()
	realIngest := e.ingest
	killed := false
	e.ingest = func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		if !killed {
			killed = true
			e.killClaim(ctx)
		}
		return realIngest(ctx, cfg, dir)
	}
	_, err := e.run(context.Background(), false, nil, nil)
	require.Error(t, err, "the worker stops: it cannot record the outcome of a claim it lost")
	require.Empty(t, e.ledger(), "nothing was committed under the lost claim, and a lost claim is no outcome of the run")

	e.ingest = realIngest
	res, _ := e.mustRun(false)
	require.Equal(t, 3, res.Totals.Ingested, "the run of the lost claim is pending again")
	var succeeded []int64
	for _, r := range e.ledger() {
		if r.Status == "succeeded" {
			succeeded = append(succeeded, r.RunID)
		}
	}
	require.Len(t, succeeded, 3)
}

// killClaim terminates the session of the one claim held: every other
// session of the database idle in a transaction is the worker's claim. It
// waits (up to 10 s) until the session has ended, so the claim's locks are
// gone before the test goes on, however busy the server.
func (e *env) killClaim(ctx context.Context) {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`).Scan(&n))
	require.Equal(e.t, 1, n, "one claim is held")
}

// overlapIngester holds each ingest at its first fence (its run's rows
// begun) until want of them are there at once, so a worker that worked
// on fewer runs at once fails on the deadline.
type overlapIngester struct {
	next    backfill.Ingester
	want    int
	mu      sync.Mutex
	at      int
	inside  int
	maxSeen int
	all     chan struct{}
}

func (o *overlapIngester) ingest(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
	o.mu.Lock()
	o.inside++
	o.maxSeen = max(o.maxSeen, o.inside)
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.inside--
		o.mu.Unlock()
	}()
	fence, first := cfg.Fence, true
	cfg.Fence = func(ctx context.Context) error {
		if err := fence(ctx); err != nil || !first {
			return err
		}
		first = false
		o.mu.Lock()
		if o.at++; o.at == o.want {
			close(o.all)
		}
		o.mu.Unlock()
		select {
		case <-o.all:
			return nil
		case <-time.After(20 * time.Second):
			return fmt.Errorf("only %d of %d ingests reached their fence together", o.at, o.want)
		}
	}
	return o.next(ctx, cfg, dir)
}

func TestRunJobsIngestRunsAtOnceEachOnceInQueueOrder(t *testing.T) {
	e := newEnv(t)
	// Oldest first: the order the queue serves them.
	runs := []int64{runOld, runMid, runNew, 30000000050, 30000000040, 30000000030}
	for i, id := range runs {
		e.tree(id, 1, i)
	}
	const jobs = 3
	ov := &overlapIngester{next: e.ingest, want: jobs, all: make(chan struct{})}
	opts := store.DefaultOptions()
	opts.Jobs = jobs // the pool of `ingest backfill --jobs 3`
	st, err := store.OpenWith(t.Context(), e.url, opts, e.log)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	o := e.options(false, &recorder{})
	o.Jobs = jobs
	res, err := backfill.Run(t.Context(), o, st, &backfill.DirSource{Dir: e.root, Log: e.log}, ov.ingest)
	require.NoError(t, err)
	require.Equal(t, jobs, ov.maxSeen, "the worker ingested %d runs at once", jobs)
	require.Equal(t, schema.BackfillCounts{Total: 6, Ingested: 6, Worked: 6}, res.Counts)
	require.True(t, res.Finished)
	require.Equal(t, 6, res.Totals.Ingested, "every job's runs are in the totals")
	require.EqualValues(t, 24, res.Totals.Rows.Benchmark.New)
	require.Equal(t, succeeded(runs...), e.ledger(), "one ingest per run, begun in the queue's order")
	var ids []int64
	rows, err := e.db.Query(t.Context(), `SELECT github_run_id FROM workflow_runs ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, runs, ids, "run rows numbered in the queue's order")
}
