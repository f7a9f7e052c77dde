package backfill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// Queue is the database side of a backfill: the pass, its queue and the
// ledger.
type Queue interface {
	OpenBackfill(ctx context.Context, spec schema.BackfillSpec) (schema.BackfillPass, error)
	ActiveBackfill(ctx context.Context, key string) (schema.BackfillPass, bool, error)
	EnqueueBackfill(ctx context.Context, passID int64, runs []schema.BackfillRun) (map[schema.BackfillState]int64, error)
	ClaimBackfillRun(ctx context.Context, passID int64) (*store.BackfillClaim, error)
	BackfillCounts(ctx context.Context, passID int64) (schema.BackfillCounts, error)
	FinishBackfill(ctx context.Context, passID int64) (bool, error)
	BackfillSettled(ctx context.Context, passID int64, states ...schema.BackfillState) ([]schema.BackfillSettled, error)
	BackfillNoteworthy(ctx context.Context, passID int64, routinePrefix string) ([]schema.BackfillSettled, error)
	LedgerHits(ctx context.Context, repo string, runIDs []int64, after int64) (map[int64]map[int]schema.LedgerHit, error)
}

// Ingester ingests one run tree with the given configuration: the same
// ingest as `ingest load`. It returns the summary (nil when the ingest
// never started) and the error of an aborted ingest.
type Ingester func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error)

// Options configure a worker.
type Options struct {
	Params Params
	// Config is the base configuration of every run's ingest.
	Config ingest.Config
	// Worker names this worker in the queue (host:pid).
	Worker string
	// Jobs is how many runs the worker works on at once (0: one). Each
	// job claims, fetches and ingests its own run in its own transactions,
	// as separate worker processes would; while one waits on PostgreSQL
	// or fetches its tree, another parses. Memory grows with Jobs, never
	// with the number of runs.
	Jobs     int
	Progress Progress
	Log      *zap.Logger
	Now      func() time.Time
}

// Result is what one worker did, and where the pass stands.
type Result struct {
	Pass   schema.BackfillPass
	Listed int
	// Queued counts the runs this worker added to the queue, by state: a
	// run the ledger shows ingested is queued skipped.
	Queued map[schema.BackfillState]int64
	// Totals are this worker's.
	Totals Totals
	// Counts are the pass's, across workers, when the worker stopped.
	Counts   schema.BackfillCounts
	Finished bool
	// Failures are the pass's failed runs, across workers.
	Failures []schema.BackfillSettled
	// NotIngestable are the runs workers of the pass skipped for another
	// reason than being ingested already: expired artifacts, a re-run in
	// progress, a purge.
	NotIngestable []schema.BackfillSettled
	Took          time.Duration
	// Interrupted is set when the worker stopped on a cancelled context.
	Interrupted bool
}

// Run is one worker: it joins (or begins) the pass, lists the runs, queues
// them, then claims and ingests runs until none is left to claim.
func Run(ctx context.Context, o Options, q Queue, src Source, ing Ingester) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Progress == nil {
		o.Progress = NewLogProgress(o.Log)
	}
	started := o.Now()
	spec, err := o.Params.Spec()
	if err != nil {
		return nil, err
	}
	// Join the pass before listing: a worker whose listing takes long then
	// still joins the pass the others are working on, even when they close
	// it meanwhile (its runs are all settled there), instead of beginning
	// a new one that would do a reingest all over again.
	res := &Result{}
	if res.Pass, err = q.OpenBackfill(ctx, spec); err != nil {
		return nil, err
	}
	runs, err := src.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the runs: %w", err)
	}
	res.Listed = len(runs)
	log := o.Log.With(zap.Int64("backfill", res.Pass.ID))
	if err := settleKnown(ctx, q, res.Pass, runs); err != nil {
		return nil, err
	}
	if res.Queued, err = q.EnqueueBackfill(ctx, res.Pass.ID, runs); err != nil {
		return nil, err
	}
	verb := "joined"
	if res.Pass.Created {
		verb = "began"
	}
	log.Info("backfill pass "+verb, zap.String("repo", res.Pass.Repo), zap.Int("listed", len(runs)),
		zap.Int64("queued_pending", res.Queued[schema.BackfillPending]),
		zap.Int64("queued_settled", res.Queued[schema.BackfillSkipped]+res.Queued[schema.BackfillFailed]), zap.Bool("reingest", res.Pass.Reingest), zap.String("worker", o.Worker))

	first := make(chan struct{})
	close(first)
	w := &worker{o: o, q: q, src: src, ing: ing, pass: res.Pass, log: log, res: res, last: first}
	counts, err := q.BackfillCounts(ctx, res.Pass.ID)
	if err != nil {
		return nil, err
	}
	o.Progress.Start(res.Pass, counts)
	w.startWorked, w.began = counts.Worked, o.Now()
	loopErr := w.jobs(ctx)
	// The closing reads must happen even when the context is cancelled.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if res.Finished, err = q.FinishBackfill(cctx, res.Pass.ID); err != nil {
		return res, errors.Join(loopErr, err)
	}
	if res.Counts, err = q.BackfillCounts(cctx, res.Pass.ID); err != nil {
		return res, errors.Join(loopErr, err)
	}
	noteworthy, err := q.BackfillNoteworthy(cctx, res.Pass.ID, alreadyIngestedPrefix)
	if err != nil {
		return res, errors.Join(loopErr, err)
	}
	for _, s := range noteworthy {
		if s.State == schema.BackfillFailed {
			res.Failures = append(res.Failures, s)
		} else {
			res.NotIngestable = append(res.NotIngestable, s)
		}
	}
	res.Took = o.Now().Sub(started)
	o.Progress.Finish(res.Counts)
	if loopErr != nil && ctx.Err() != nil {
		res.Interrupted = true
		return res, nil
	}
	return res, loopErr
}

// settleKnown marks, before they are queued, the runs whose listed attempt
// the ledger already shows ingested (without a reingest), so that a
// listing of thousands of runs costs one ledger query, not one per run.
// The claim checks again: this is only the fast path.
func settleKnown(ctx context.Context, q Queue, pass schema.BackfillPass, runs []schema.BackfillRun) error {
	if pass.Reingest || len(runs) == 0 {
		return nil
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	hits, err := q.LedgerHits(ctx, pass.Repo, ids, 0)
	if err != nil {
		return err
	}
	for i := range runs {
		r := &runs[i]
		if r.State != "" {
			continue
		}
		if r.Attempt == 0 {
			// No attempt known (an archive run): any ingested attempt counts.
			if h := newestHit(hits[r.RunID]); h != nil {
				r.State, r.Detail = schema.BackfillSkipped, alreadyIngested(*h)
			}
			continue
		}
		if h, ok := hits[r.RunID][r.Attempt]; ok {
			r.State, r.Detail = schema.BackfillSkipped, alreadyIngested(h)
		}
	}
	return nil
}

// alreadyIngestedPrefix starts the reason of a run skipped because the
// ledger holds it.
const alreadyIngestedPrefix = "already ingested: "

func alreadyIngested(h schema.LedgerHit) string {
	return fmt.Sprintf("%sattempt %d (ingest #%d, %s)", alreadyIngestedPrefix, h.Attempt, h.IngestID, h.Status)
}

type worker struct {
	o           Options
	q           Queue
	src         Source
	ing         Ingester
	pass        schema.BackfillPass
	log         *zap.Logger
	startWorked int64
	began       time.Time

	// stop is set when a job fails: the others finish the run they hold
	// and claim no more.
	stop atomic.Bool
	// claimMu serialises claims; last is the turn of the run claimed
	// last (a closed channel before the first claim).
	claimMu sync.Mutex
	last    <-chan struct{}
	// mu guards res.Totals, which every job adds to, and serialises the
	// calls to Progress.
	mu  sync.Mutex
	res *Result
}

// jobs runs Options.Jobs loops at once and returns the first error one of
// them stopped on.
func (w *worker) jobs(ctx context.Context) error {
	n := max(w.o.Jobs, 1)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = w.loop(ctx)
			if errs[i] != nil {
				w.stop.Store(true)
			}
		})
	}
	wg.Wait()
	// A job's own failure before the cancellation the others saw.
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
		case !errors.Is(err, context.Canceled):
			return err
		case first == nil:
			first = err
		}
	}
	return first
}

func (w *worker) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.stop.Load() {
			return nil
		}
		claim, turn, err := w.claim(ctx)
		if err != nil {
			return err
		}
		if claim == nil {
			return nil
		}
		w.mu.Lock()
		w.o.Progress.Working(claim.Run)
		w.mu.Unlock()
		began := w.o.Now()
		out, sum := w.work(ctx, claim.Run, claim.Alive, turn)
		turn.begun()
		if ctx.Err() != nil {
			// Interrupted: whatever the ingest did was rolled back, and the
			// run goes back to the queue for the next worker.
			claim.Release(ctx)
			return ctx.Err()
		}
		out.Worker = w.o.Worker
		out.Duration = w.o.Now().Sub(began)
		if err := claim.Settle(ctx, out); err != nil {
			return err
		}
		w.mu.Lock()
		w.res.Totals.add(out, sum)
		w.mu.Unlock()
		counts, err := w.q.BackfillCounts(ctx, w.pass.ID)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.o.Progress.Settled(claim.Run, out, sum, counts, w.eta(counts))
		w.mu.Unlock()
	}
}

// turn orders the ingests of a worker's jobs as their claims: an ingest
// begins writing only once the run claimed before it has (its run row and
// ledger row are written, the first fence) or has ended. The rows of
// concurrent jobs then number their runs in the order one job would have:
// latest_benchmarks breaks ties of date and start time by the run row's
// id, so the dashboard ends as a one-job pass leaves it.
type turn struct {
	prev <-chan struct{} // closed once the run claimed before began
	mine chan struct{}
	once sync.Once
}

// begun opens the next run's turn (more calls do nothing).
func (t *turn) begun() { t.once.Do(func() { close(t.mine) }) }

// wait waits for the previous run's turn.
func (t *turn) wait(ctx context.Context) error {
	select {
	case <-t.prev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// claim claims the next run and its turn, one job at a time so that the
// turns follow the queue's order.
func (w *worker) claim(ctx context.Context) (*store.BackfillClaim, *turn, error) {
	w.claimMu.Lock()
	defer w.claimMu.Unlock()
	claim, err := w.q.ClaimBackfillRun(ctx, w.pass.ID)
	if err != nil || claim == nil {
		return nil, nil, err
	}
	t := &turn{prev: w.last, mine: make(chan struct{})}
	w.last = t.mine
	return claim, t, nil
}

// work settles one claimed run: skipped when the ledger shows it
// ingested, else fetched and ingested.
func (w *worker) work(ctx context.Context, run schema.BackfillRun, fence func(context.Context) error, turn *turn) (schema.BackfillOutcome, *schema.Summary) {
	failed := func(format string, a ...any) schema.BackfillOutcome {
		return schema.BackfillOutcome{State: schema.BackfillFailed, Attempt: run.Attempt, Detail: fmt.Sprintf(format, a...)}
	}
	done, err := w.ingested(ctx, run.RunID, run.Attempt)
	if err != nil {
		return failed("%v", err), nil
	}
	if done != nil {
		return schema.BackfillOutcome{State: schema.BackfillSkipped, Attempt: run.Attempt, Detail: alreadyIngested(*done)}, nil
	}
	f, err := w.src.Fetch(ctx, run)
	if err != nil {
		return failed("fetch: %v", err), nil
	}
	if f.Skip != "" {
		return schema.BackfillOutcome{State: schema.BackfillSkipped, Attempt: f.Attempt, Detail: f.Skip}, nil
	}
	// A run interrupted (the pass cancelled) keeps its downloads: the pass
	// that resumes it reads them from the cache.
	defer func() {
		if f.Cleanup != nil && ctx.Err() == nil {
			if err := f.Cleanup(); err != nil {
				w.log.Warn("could not clean up after the run", zap.Int64("run_id", run.RunID), zap.Error(err))
			}
		}
	}()
	attempt := run.Attempt
	if f.Attempt != 0 && f.Attempt != run.Attempt {
		// Re-run since it was listed: the new attempt may be ingested.
		attempt = f.Attempt
		if done, err := w.ingested(ctx, run.RunID, attempt); err != nil {
			return failed("%v", err), nil
		} else if done != nil {
			return schema.BackfillOutcome{State: schema.BackfillSkipped, Attempt: attempt, Detail: alreadyIngested(*done)}, nil
		}
	}
	cfg := w.o.Config
	if f.Configure != nil {
		f.Configure(&cfg)
	}
	cfg.Fence = func(ctx context.Context) error {
		turn.begun() // the first call: the run's rows are begun
		return fence(ctx)
	}
	if err := turn.wait(ctx); err != nil {
		return failed("%v", err), nil
	}
	sum, err := w.ing(ctx, cfg, f.Dir)
	if sum != nil && sum.Run.SourceRunAttempt != 0 {
		attempt = sum.Run.SourceRunAttempt
	}
	if err != nil {
		out := failed("ingest: %v", err)
		out.Attempt = attempt
		if sum != nil {
			out.IngestID, out.IngestStatus = sum.IngestID, sum.Status
		}
		return out, sum
	}
	if sum.Details.PurgedRun {
		return schema.BackfillOutcome{State: schema.BackfillSkipped, Attempt: attempt,
			Detail: fmt.Sprintf("attempt %d is purged by the run overrides: nothing written", attempt)}, sum
	}
	out := schema.BackfillOutcome{State: schema.BackfillIngested, Attempt: attempt, IngestID: sum.IngestID, IngestStatus: sum.Status}
	if sum.Details.NoBenchmarkData != "" {
		out.Detail = NoBenchmarkPrefix + sum.Details.NoBenchmarkData
	}
	return out, sum
}

// ingested is the ledger's successful ingest of the run's attempt that
// counts for this pass (nil when there is none). Attempt 0 is a run whose
// attempt its source does not know (the archive without GitHub): any
// ingested attempt counts, the newest.
func (w *worker) ingested(ctx context.Context, runID int64, attempt int) (*schema.LedgerHit, error) {
	after := int64(0)
	if w.pass.Reingest {
		after = w.pass.LedgerMark
	}
	hits, err := w.q.LedgerHits(ctx, w.pass.Repo, []int64{runID}, after)
	if err != nil {
		return nil, err
	}
	if attempt == 0 {
		return newestHit(hits[runID]), nil
	}
	if h, ok := hits[runID][attempt]; ok {
		return &h, nil
	}
	return nil, nil
}

// newestHit is the hit of the largest attempt (nil when none).
func newestHit(byAttempt map[int]schema.LedgerHit) *schema.LedgerHit {
	var best *schema.LedgerHit
	for a, h := range byAttempt {
		if best == nil || a > best.Attempt {
			h := h
			best = &h
		}
	}
	return best
}

// eta estimates the time left from the pace of the whole pass (every
// worker) since this worker began: runs settled by a worker, not runs
// queued already settled.
func (w *worker) eta(c schema.BackfillCounts) time.Duration {
	done := c.Worked - w.startWorked
	if done <= 0 || c.Pending == 0 {
		return 0
	}
	elapsed := w.o.Now().Sub(w.began)
	return time.Duration(float64(elapsed) / float64(done) * float64(c.Pending))
}

// sortOldestFirst orders runs as the queue serves them, for listings.
func sortOldestFirst(runs []schema.BackfillRun) {
	slices.SortStableFunc(runs, func(a, b schema.BackfillRun) int {
		switch {
		case a.CreatedAt.IsZero() != b.CreatedAt.IsZero():
			if a.CreatedAt.IsZero() {
				return 1
			}
			return -1
		case !a.CreatedAt.Equal(b.CreatedAt):
			return a.CreatedAt.Compare(b.CreatedAt)
		}
		switch {
		case a.RunID < b.RunID:
			return -1
		case a.RunID > b.RunID:
			return 1
		}
		return 0
	})
}
