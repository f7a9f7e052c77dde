package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// recordTimeout bounds writing the ledger row of an aborted ingest, which
// happens after the run's own context may have been cancelled.
const recordTimeout = 15 * time.Second

// Run ingests one run's artifact tree. It always returns a summary; the
// error is non-nil when the ingest was aborted and rolled back (the summary
// then says why, and nothing but its ledger row was written).
//
// The steps, in order: settle the run's identity (or stop for a purged
// run), plan its artifacts, read what comes before the benchmark rows,
// answer an unchanged rerun from the ledger, write the benchmark rows,
// run the later stages, apply the run overrides and update the curves,
// judge the impact, and commit.
func Run(ctx context.Context, cfg Config, tree *source.Tree, d Deps) (*schema.Summary, error) {
	in := newIngestion(cfg, tree, d)
	if tree.ListingErr != nil {
		return refuseListing(ctx, cfg, tree, in.sum, in.t, d)
	}
	if err := in.identify(); err != nil {
		return abort(in.sum, in.t, d, err), err
	}
	if reason, purged := d.Overrides.RunPurged(in.start.Run.SourceRunID, in.start.Run.SourceRunAttempt); purged {
		return ingestPurged(ctx, cfg, in.start, in.sum, in.t, d, reason)
	}
	if c, ok := d.Overrides.Conclusion(in.start.Run.SourceRunID); ok {
		in.start.Meta.Conclusion = c
	}
	p, absent := in.plan()
	in.log.Info("ingest started", zap.Int64("run_id", in.start.Run.SourceRunID), zap.Int("attempt", in.start.Run.SourceRunAttempt),
		zap.Int("artifacts", len(tree.Artifacts)), zap.Bool("dry_run", cfg.DryRun))
	rd, err := in.readFirst(&p)
	if err != nil {
		return in.fail(ctx, err)
	}
	var inputs *inputDigest
	if d.Build != nil {
		inputs = newInputDigest(ctx, cfg, tree, d.Build)
		defer inputs.tree.Stop() // an ingest that fails never waits for it
		if rs, done, err := in.answerUnchanged(ctx, inputs); done {
			return rs, err
		}
	}
	// The benchmark files are read from here on, while the run's
	// transaction is opened (its lock, the workflow run and ledger rows,
	// the staging tables): the first rows wait in the stream's buffer.
	stagingStarted := time.Now()
	d.stageStart("benchmarks")
	bs := startBenchmarks(ctx, rd.stage, p)
	w, rs, err := in.begin(ctx, bs)
	if w == nil {
		return rs, err
	}
	defer w.Rollback(ctx)
	b, err := in.writeBenchmarks(ctx, w, bs, rd, p, stagingStarted)
	if err != nil {
		return in.fail(ctx, err)
	}
	if err := in.runLaterStages(ctx, w, b); err != nil {
		return in.fail(ctx, err)
	}
	in.noteNotRead(rd.stage)
	// Every file the run reads has been read: the tree's digest is
	// finished (from the sums taken while reading, and the files no stage
	// read) while PostgreSQL updates the curves.
	hashing := inputs.inBackground(ctx)
	view, err := in.updateCurves(ctx, w, b)
	if err != nil {
		return in.fail(ctx, err)
	}
	if err := in.judgeImpact(ctx, w, view, rd, b); err != nil {
		return in.fail(ctx, err)
	}
	if !rd.changelog.Log.EvalsOnly() {
		in.sum.Details.NoBenchmarkData = noBenchmarkData(in.sum.Rows.Benchmark, len(p.Benchmark), absent.expired, absent.missing, tree.ListingName)
	}
	finish(in.sum, in.t, d)
	if err := fence(ctx, cfg); err != nil {
		return abort(in.sum, in.t, d, err), err
	}
	if err := in.setInputDigest(ctx, w, inputs, hashing); err != nil {
		return in.fail(ctx, err)
	}
	if err := in.commit(ctx, w, inputs, b.ahead); err != nil {
		return in.fail(ctx, err)
	}
	return in.sum, nil
}

// ingestion is one call of Run: what its steps share. Each step returns
// what the later ones need.
type ingestion struct {
	cfg   Config
	tree  *source.Tree
	d     Deps
	log   *zap.Logger
	began time.Time
	sum   *schema.Summary
	t     *runstate.Tally
	start schema.RunStart
	// records are the ledger's artifact records; every stage appends its own.
	records []*runstate.Record
}

func newIngestion(cfg Config, tree *source.Tree, d Deps) *ingestion {
	in := &ingestion{cfg: cfg, tree: tree, d: d, log: d.Log.Named("ingest"), began: time.Now()}
	started := d.Now()
	if !cfg.Started.IsZero() {
		started = cfg.Started
	}
	in.sum = &schema.Summary{SchemaVersion: schema.SummarySchemaVersion, Run: cfg.Run, Target: cfg.Target,
		DryRun: cfg.DryRun, StartedAt: started, Failures: []schema.Failure{}, Notes: []string{}}
	in.t = runstate.NewTally(in.sum)
	in.sum.Links.IngestRun = cfg.IngestRunURL
	return in
}

// fail aborts the ingest and records the abort in the ledger
// (abortRecorded).
func (in *ingestion) fail(ctx context.Context, err error) (*schema.Summary, error) {
	return abortRecorded(ctx, in.sum, in.t, in.d, in.start, in.records, err)
}

// identify settles the run's identity; an invalid one aborts before the
// database is touched.
func (in *ingestion) identify() error {
	start, err := runStart(in.cfg, in.tree, in.sum.StartedAt, in.t)
	if err != nil {
		return err
	}
	in.start = start
	in.sum.Run = start.Run
	in.sum.Links.SourceRun = start.Meta.HTMLURL
	in.sum.Links.MergeRun = start.MergeMeta.HTMLURL
	for _, n := range in.cfg.SourceNotes {
		in.t.Note(n)
	}
	return nil
}

// absentBenchmarks counts the benchmark artifacts the listing names and
// the tree lacks: expired, or missing though downloadable.
type absentBenchmarks struct{ expired, missing int }

// plan lists the tree's problems and absent artifacts and classifies its
// artifacts, noting how attempts were ordered.
func (in *ingestion) plan() (runstate.Plan, absentBenchmarks) {
	for _, p := range in.tree.Problems {
		in.t.Fail(schema.CategoryRun, p.Artifact, p.File, p.Reason)
	}
	var a absentBenchmarks
	a.expired, a.missing = noteAbsent(in.t, in.tree)
	p := runstate.NewPlan(in.tree)
	if p.Inferred {
		in.sum.Details.AttemptOrder = "inferred"
		in.t.Note("attempt order was inferred from file modification times: the tree has no artifacts.json listing")
	} else {
		in.sum.Details.AttemptOrder = "listing"
		if p.Unlisted > 0 {
			in.t.Note(fmt.Sprintf("%s not in artifacts.json: ordered after the listed ones", runstate.Plural(p.Unlisted, "benchmark artifact is", "benchmark artifacts are")))
		}
	}
	return p, a
}

// firstRead is what is read before the benchmark rows: the benchmark
// stage set up with the producer's quarantine and the receipt's evidence,
// and the changelog.
type firstRead struct {
	stage       *benchmarks.Stage
	changelog   *runstate.Changelog
	quarantined *quarantine.Lists
}

// readFirst reads the changelog (an evals-only run skips the benchmark
// stage: p changes), the quarantine lists (unreadable: an abort) and the
// receipt.
func (in *ingestion) readFirst(p *runstate.Plan) (firstRead, error) {
	rd := firstRead{stage: benchmarks.New(in.d.stageDeps(), in.start.Run, in.start.Meta.HeadSHA, in.t, &in.records)}
	rd.changelog = changelog.Read(*p, in.start, in.t, &in.records)
	if rd.changelog.Log.EvalsOnly() {
		changelog.SkipForEvalsOnly(p, in.t, &in.records, in.log)
	}
	q, err := runstate.ReadQuarantine(*p, &in.records, &in.sum.Details)
	if err != nil {
		return rd, err
	}
	rd.quarantined = q
	rd.stage.SetQuarantine(q)
	rd.stage.SetEvidence(runstate.VerifyReceipt(in.tree, in.t))
	return rd, nil
}

// answerUnchanged answers a rerun of unchanged inputs from the ledger;
// done is false when the run is to be read in full.
func (in *ingestion) answerUnchanged(ctx context.Context, inputs *inputDigest) (rs *schema.Summary, done bool, err error) {
	rs, ok, err := answerUnchanged(ctx, in.cfg, in.start, in.sum, inputs, in.d)
	if fe := (fenceError{}); errors.As(err, &fe) {
		return abort(in.sum, in.t, in.d, fe.err), true, fe.err
	}
	if err != nil {
		rs, err = in.fail(ctx, err)
		return rs, true, err
	}
	if !ok {
		return nil, false, nil
	}
	in.d.stageDone("unchanged", in.began)
	in.log.Info("ingest finished: inputs unchanged", zap.String("status", string(rs.Status)),
		zap.Int64("ingest_id", rs.IngestID), zap.Int64("unchanged_since", rs.Details.UnchangedSince),
		zap.Int64("duration_ms", rs.Details.DurationMS))
	return rs, true, nil
}

// begin opens the run's transaction and asks the fence, once the run's
// lock is held. On failure w is nil and the stream is stopped: the
// summary and error are the ingest's.
func (in *ingestion) begin(ctx context.Context, bs *benchmarkStream) (w RunWriter, rs *schema.Summary, err error) {
	w, err = in.d.Store.BeginRun(ctx, in.start)
	if err != nil {
		_ = bs.stop() // the abort's cause is BeginRun's error
		rs, err = in.fail(ctx, err)
		return nil, rs, err
	}
	if w.Run().NoConclusion {
		noteNoConclusion(in.t, in.log, in.start)
	}
	// A caller that may have lost its right to write the run (a backfill
	// worker's claim) stops before the work, once it holds the run's lock.
	if err := fence(ctx, in.cfg); err != nil {
		_ = bs.stop() // the abort's cause is the fence's refusal
		_ = w.Rollback(ctx)
		return nil, abort(in.sum, in.t, in.d, err), err
	}
	return w, nil, nil
}

// benchmarksWritten is what writing the benchmark rows leaves for the
// later steps.
type benchmarksWritten struct {
	env *runstate.Env
	ev  *evals.Rows
	// ahead encodes the records so far while PostgreSQL works.
	ahead *runstate.RecordsAhead
	// overrides: what the point backfills changed, and the run's other
	// ledger entries, applied after the stages.
	overrides      schema.OverrideResult
	laterOverrides schema.OverridePlan
}

// writeBenchmarks corrects the run's stored points the ledger backfills,
// stages the benchmark rows, reads the run stats, and applies the run
// while the eval rows are read.
func (in *ingestion) writeBenchmarks(ctx context.Context, w RunWriter, bs *benchmarkStream, rd firstRead, p runstate.Plan,
	stagingStarted time.Time) (benchmarksWritten, error) {
	var b benchmarksWritten
	// Stored points of the run the ledger corrects are corrected before
	// the run's rows are written, so a corrected identity meets no stale
	// copy of its source.
	pointFixes, later := in.d.runOverrides(in.start.Run.SourceRunID).SplitPointBackfills()
	b.laterOverrides = later
	if len(pointFixes.PointBackfills) > 0 {
		r, err := w.ApplyRunOverrides(ctx, pointFixes)
		if err != nil {
			_ = bs.stop()
			return b, err
		}
		b.overrides.Add(r)
	}
	stage := rd.stage
	in.log.Debug("staging benchmark rows")
	if err := bs.copyTo(ctx, w, in.d.Normalizer, stage.Winners().Add); err != nil {
		return b, err
	}
	in.log.Info("benchmark rows staged", zap.Int64("rows", stage.Staged()), zap.Int64("files", in.sum.Stats.BenchmarkFiles),
		zap.Duration("took", time.Since(stagingStarted)))
	stats := stage.ReadRunStats(p.RunStats)
	// The records so far — the benchmark stage's, thousands on a large
	// run — are final: their ledger JSON is encoded while PostgreSQL
	// applies the run.
	b.ahead = runstate.EncodeAhead(in.records)
	b.env = &runstate.Env{Deps: in.d.stageDeps(), Start: in.start, Tree: in.tree, Plan: p, Tally: in.t, Sum: in.sum, Log: in.log,
		Records: &in.records, Changelog: rd.changelog, AgentX: stage.AgentX(), Points: stage.Winners().Points(), Quarantine: rd.quarantined}
	ranking := stage.Winners().Result()
	applyStarted := time.Now()
	// The eval rows are read (files and configs, no database) while
	// PostgreSQL applies the benchmark rows; nothing else touches the
	// summary until both are done.
	evalRows := make(chan *evals.Rows, 1)
	go func() {
		read := time.Now()
		rows := evals.Read(b.env)
		in.log.Debug("evals read", zap.Duration("took", time.Since(read)))
		evalRows <- rows
	}()
	res, err := w.Apply(ctx, stats, ranking.Write, ranking.Adopted)
	b.ev = <-evalRows
	if err != nil {
		return b, err
	}
	in.log.Info("run applied", zap.Int64("benchmark_new", res.BenchmarkNew), zap.Duration("took", time.Since(applyStarted)))
	if res.BenchmarkStaged != stage.Staged() {
		return b, fmt.Errorf("store staged %d benchmark rows, the pipeline sent %d", res.BenchmarkStaged, stage.Staged())
	}
	in.sum.AddCounters(ranking.Counts(res))
	in.d.stageDone("benchmarks", in.began)
	return b, nil
}

// runLaterStages runs the stages after the benchmark rows, in order.
func (in *ingestion) runLaterStages(ctx context.Context, w RunWriter, b benchmarksWritten) error {
	for _, s := range laterStages(w, b.ev) {
		stageStarted := time.Now()
		in.d.stageStart(s.name)
		counts, err := s.run(ctx, b.env)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		in.sum.AddCounters(counts)
		in.d.stageDone(s.name, stageStarted)
	}
	return nil
}

// noteNotRead notes the benchmark files not read and the rows the
// producer quarantined.
func (in *ingestion) noteNotRead(stage *benchmarks.Stage) {
	if nr := stage.NotRead(); len(nr) > 0 {
		in.t.Note(fmt.Sprintf("%s of benchmark artifacts not read: not JSON, so no rows (%s)",
			runstate.Plural(len(nr), "file", "files"), runstate.ListSome(nr, 3)))
	}
	if n := in.sum.Details.QuarantinedRows + in.sum.Details.QuarantinedEvalRows; n > 0 {
		in.t.Note(fmt.Sprintf("%s the producer quarantined (rejected_rows_*) were skipped: %d benchmark, %d eval",
			runstate.Plural(int(n), "row", "rows"), in.sum.Details.QuarantinedRows, in.sum.Details.QuarantinedEvalRows))
	}
}

// updateCurves applies the run's other ledger entries (to what earlier
// ingests stored of the run too: a point purged since, another attempt
// purged, retired GPU power) and then brings latest_benchmarks up to
// date, the overrides' deletions included.
func (in *ingestion) updateCurves(ctx context.Context, w RunWriter, b benchmarksWritten) (schema.ViewRefresh, error) {
	later, err := w.ApplyRunOverrides(ctx, b.laterOverrides)
	if err != nil {
		return schema.ViewRefresh{}, err
	}
	ores := b.overrides
	ores.Add(later)
	noteOverrides(in.t, in.sum, ores)
	curvesStarted := time.Now()
	in.d.stageStart("curves")
	view, err := w.UpdateLatestBenchmarks(ctx)
	if err != nil {
		return view, err
	}
	if !in.cfg.DryRun {
		viewUpdated(in.sum, view)
	}
	in.d.stageDone("curves", curvesStarted)
	return view, nil
}

// judgeImpact computes the run's impact on the dashboard and applies the
// coverage guard.
func (in *ingestion) judgeImpact(ctx context.Context, w RunWriter, view schema.ViewRefresh, rd firstRead, b benchmarksWritten) error {
	impactStarted := time.Now()
	in.d.stageStart("impact")
	in.sum.Details.AppendOnly = rd.changelog.Log.AppendOnly()
	accept := append(slices.Clone(in.cfg.AcceptCoverageLoss), in.d.Overrides.CoverageLossAccepted(in.start.Run.SourceRunID)...)
	if err := noteImpact(ctx, in.cfg.CoverageGuard, accept, w, view, in.sum, b.ev.Evidence()); err != nil {
		return err
	}
	in.d.stageDone("impact", impactStarted)
	return nil
}

// setInputDigest waits for the inputs' digest and gives it to the
// ledger row; a digest that could not be taken only costs the next rerun
// a full read, unless the ingest was cancelled.
func (in *ingestion) setInputDigest(ctx context.Context, w RunWriter, inputs *inputDigest, hashing <-chan hashed) error {
	if inputs == nil {
		return nil
	}
	waited := time.Now()
	h := <-hashing
	in.log.Debug("inputs hashed", zap.Duration("waited", time.Since(waited)))
	if h.err != nil && ctx.Err() != nil {
		return h.err
	}
	if h.err != nil {
		in.log.Info("inputs not hashed: a rerun will read the run in full", zap.Error(h.err))
	}
	w.SetInputDigest(h.digest, h.index)
	return nil
}

// commit publishes (a staged ingest or promotion), writes the ledger row
// and commits, or rolls a dry run back.
func (in *ingestion) commit(ctx context.Context, w RunWriter, inputs *inputDigest, ahead *runstate.RecordsAhead) error {
	encoded := ahead.Encode(in.records)
	if err := publish(ctx, in.cfg, inputs, encoded, in.sum); err != nil {
		return err
	}
	commitStarted := time.Now()
	in.d.stageStart("commit")
	if err := w.Finish(ctx, in.sum, encoded, in.cfg.DryRun); err != nil {
		return err
	}
	in.d.stageDone("commit", commitStarted)
	// A dry run's ledger row was rolled back: its id names nothing.
	id := zap.Int64("ingest_id", in.sum.IngestID)
	if in.cfg.DryRun {
		in.sum.IngestID = 0
		id = zap.Bool("dry_run", true)
	}
	in.log.Info("ingest finished", zap.String("status", string(in.sum.Status)), id,
		zap.Int64("benchmark_new", in.sum.Rows.Benchmark.New), zap.Int64("benchmark_duplicate", in.sum.Rows.Benchmark.Duplicate),
		zap.Int64("duration_ms", in.sum.Details.DurationMS))
	return nil
}

// benchmarkStream is the benchmark stage's parser running in the
// background, feeding a small channel that the COPY drains.
type benchmarkStream struct {
	rows   chan schema.StagedBenchmark
	parsed chan error
	ctx    context.Context
	cancel context.CancelFunc
}

// startBenchmarks starts reading the plan's benchmark files.
func startBenchmarks(ctx context.Context, stage *benchmarks.Stage, p runstate.Plan) *benchmarkStream {
	ctx, cancel := context.WithCancel(ctx)
	bs := &benchmarkStream{rows: make(chan schema.StagedBenchmark, 256), parsed: make(chan error, 1), ctx: ctx, cancel: cancel}
	go func() { bs.parsed <- stage.Stream(ctx, p, bs.rows) }()
	return bs
}

// stop ends the stream (what is left of it is not staged) and waits for
// the parser, so that nothing it counts races with what follows; it
// returns the parser's error.
func (bs *benchmarkStream) stop() error {
	bs.cancel()
	for range bs.rows {
	}
	return <-bs.parsed
}

// copyTo stages the stream's rows with COPY; the parser is stopped if the
// COPY ends early. It returns once the parser has finished. A row's
// metrics map goes back to n once the store asks for the next row (it has
// encoded the row by then: RunWriter.StageBenchmarks).
func (bs *benchmarkStream) copyTo(ctx context.Context, w RunWriter, n *benchmark.Normalizer, seen func(schema.StagedCopy)) error {
	var prev schema.StagedBenchmark
	_, copyErr := w.StageBenchmarks(ctx, func() (schema.StagedBenchmark, bool, error) {
		if n != nil {
			n.Release(&prev.Point)
		}
		select {
		case r, ok := <-bs.rows:
			prev = r
			return r, ok, nil
		case <-bs.ctx.Done():
			return schema.StagedBenchmark{}, false, bs.ctx.Err()
		}
	}, seen)
	parseErr := bs.stop() // stops the parser if the COPY ended early
	if copyErr != nil {
		return copyErr
	}
	if parseErr != nil {
		return fmt.Errorf("read benchmark files: %w", parseErr)
	}
	return nil
}

// fenceTimeout bounds the fence: a claim whose connection hangs must not
// keep the run's transaction open.
const fenceTimeout = 30 * time.Second

// fence asks the caller whether the run may still be written. A refusal
// aborts without a ledger row: it is the caller's coordination (another
// worker owns the run now), not an outcome of the run.
func fence(ctx context.Context, cfg Config) error {
	if cfg.Fence == nil {
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, fenceTimeout)
	defer cancel()
	if err := cfg.Fence(fctx); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("fence: %w", err)
	}
	return nil
}

// finish stamps the status and timings of a run that was written.
func finish(sum *schema.Summary, t *runstate.Tally, d Deps) *schema.Summary {
	t.Close()
	sum.FinishedAt = d.Now()
	sum.Details.DurationMS = sum.FinishedAt.Sub(sum.StartedAt).Milliseconds()
	sum.Status = schema.StatusSucceeded
	if sum.FailureCount() > 0 || sum.Details.NoBenchmarkData != "" {
		sum.Status = schema.StatusCompletedWithFailures
	}
	return sum
}

// ingestPurged is the ingest of a run attempt the run overrides purge:
// nothing of it is written, what earlier ingests stored of it is deleted
// (in a transaction of its own, under the coverage guard), and the ledger
// records the ingest with the status purged, unless this is a dry run.
func ingestPurged(ctx context.Context, cfg Config, start schema.RunStart, sum *schema.Summary, t *runstate.Tally, d Deps, reason string) (*schema.Summary, error) {
	t.Note(fmt.Sprintf("run %d attempt %d is purged by the run overrides (%s): nothing was written",
		start.Run.SourceRunID, start.Run.SourceRunAttempt, reason))
	sum.Details.PurgedRun, sum.Details.PurgeReason = true, reason
	// What the purge deletes is under the coverage guard, as a run's
	// rows are: judged in its transaction, before the commit.
	accept := append(slices.Clone(cfg.AcceptCoverageLoss), d.Overrides.CoverageLossAccepted(start.Run.SourceRunID)...)
	judge := func(_ context.Context, view schema.ViewRefresh, curves []schema.CurveImpact) error {
		imp, refused, err := judgeCurves(cfg.CoverageGuard, accept, false, curves, view)
		if err != nil {
			return err
		}
		sum.Impact = imp
		return refused
	}
	res, view, _, err := d.Store.ApplyOverridesJudged(ctx, d.runOverrides(start.Run.SourceRunID), cfg.DryRun, cfg.ToolVersion, judge)
	if errors.Is(err, ErrCoverageRefused) {
		// Recorded, as the guard's refusal of a run's rows is.
		return abortRecorded(ctx, sum, t, d, start, nil, err)
	}
	if err != nil {
		return abort(sum, t, d, err), err
	}
	if !cfg.DryRun {
		viewUpdated(sum, view)
	}
	noteOverrides(t, sum, res)
	finish(sum, t, d)
	sum.Status = schema.StatusPurged
	if cfg.DryRun {
		return sum, nil
	}
	id, err := d.Store.RecordPurged(ctx, start, sum)
	if err != nil {
		return abort(sum, t, d, err), err
	}
	sum.IngestID = id
	return sum, nil
}

// abort turns the summary into the one of a rolled-back ingest: nothing was
// written, so the table and counters are zero; failures and notes stay.
func abort(sum *schema.Summary, t *runstate.Tally, d Deps, cause error) *schema.Summary {
	t.Close()
	// The run's transaction is rolled back (a refused run's too): a note
	// saying what it wrote would contradict "Nothing was written".
	t.DropWriteNotes()
	// A run the coverage guard refused was processed in full and rolled
	// back: its counts say what it would have written, which is what the
	// person deciding whether to acknowledge the loss needs.
	if !errors.Is(cause, ErrCoverageRefused) {
		sum.Rows = schema.Rows{}
		sum.Stats = schema.Stats{}
		// Nothing was written, so no counter of what was read or written
		// stands; how the attempts were ordered does.
		sum.Details = schema.Details{AttemptOrder: sum.Details.AttemptOrder, UnknownMetrics: sum.Details.UnknownMetrics}
	}
	sum.Status = schema.StatusAborted
	sum.AbortReason = wording.OneLine(cause.Error(), maxReasonRunes)
	sum.FinishedAt = d.Now()
	sum.Details.DurationMS = sum.FinishedAt.Sub(sum.StartedAt).Milliseconds()
	return sum
}

// abortRecorded aborts and, unless this is a dry run, records the failure in
// the ledger in its own transaction. It returns the summary and the error
// of the abort: the cause, or when the context was cancelled the
// cancellation's cause ("cancelled (SIGTERM)"): what the driver or a reader
// reports then is only the effect (a connection it closed).
func abortRecorded(ctx context.Context, sum *schema.Summary, t *runstate.Tally, d Deps, start schema.RunStart, records []*runstate.Record, cause error) (*schema.Summary, error) {
	if ctx.Err() != nil {
		cause = context.Cause(ctx)
	}
	abort(sum, t, d, cause)
	if sum.DryRun {
		return sum, cause
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	id, err := d.Store.RecordAborted(rctx, start, sum, runstate.EncodeRecords(records), cause)
	if err != nil {
		d.Log.Error("could not record the aborted ingest in the ledger", zap.Error(err))
		return sum, cause
	}
	sum.IngestID = id
	return sum, cause
}

// maxReasonRunes bounds an abort reason as the ledger and the JSON summary
// keep it: long enough for any reason the ingest writes whole.
const maxReasonRunes = 2000
