package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
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
func Run(ctx context.Context, cfg Config, tree *source.Tree, d Deps) (*schema.Summary, error) {
	log := d.Log.Named("ingest")
	began := time.Now()
	started := d.Now()
	if !cfg.Started.IsZero() {
		started = cfg.Started
	}
	sum := &schema.Summary{SchemaVersion: schema.SummarySchemaVersion, Run: cfg.Run, Target: cfg.Target,
		DryRun: cfg.DryRun, StartedAt: started, Failures: []schema.Failure{}, Notes: []string{}}
	t := runstate.NewTally(sum)
	sum.Links.IngestRun = cfg.IngestRunURL
	if tree.ListingErr != nil {
		return refuseListing(ctx, cfg, tree, sum, t, d)
	}

	start, err := runStart(cfg, tree, started, t)
	if err != nil {
		return abort(sum, t, d, err), err
	}
	sum.Run = start.Run
	sum.Links.SourceRun = start.Meta.HTMLURL
	sum.Links.MergeRun = start.MergeMeta.HTMLURL
	for _, n := range cfg.SourceNotes {
		t.Note(n)
	}
	if reason, purged := d.Overrides.RunPurged(start.Run.SourceRunID, start.Run.SourceRunAttempt); purged {
		return ingestPurged(ctx, cfg, start, sum, t, d, reason)
	}
	if c, ok := d.Overrides.Conclusion(start.Run.SourceRunID); ok {
		start.Meta.Conclusion = c
	}
	for _, p := range tree.Problems {
		t.Fail(schema.CategoryRun, p.Artifact, p.File, p.Reason)
	}
	expiredBenchmark, missingBenchmark := noteAbsent(t, tree)
	p := runstate.NewPlan(tree)
	if p.Inferred {
		sum.Details.AttemptOrder = "inferred"
		t.Note("attempt order was inferred from file modification times: the tree has no artifacts.json listing")
	} else {
		sum.Details.AttemptOrder = "listing"
		if p.Unlisted > 0 {
			t.Note(fmt.Sprintf("%s not in artifacts.json: ordered after the listed ones", runstate.Plural(p.Unlisted, "benchmark artifact is", "benchmark artifacts are")))
		}
	}

	log.Info("ingest started", zap.Int64("run_id", start.Run.SourceRunID), zap.Int("attempt", start.Run.SourceRunAttempt),
		zap.Int("artifacts", len(tree.Artifacts)), zap.Bool("dry_run", cfg.DryRun))
	// records are the ledger's artifact records; every stage appends its own.
	var records []*runstate.Record
	stage := benchmarks.New(d.stageDeps(), start.Run, start.Meta.HeadSHA, t, &records)
	cl := changelog.Read(p, start, t, &records)
	if cl.Log.EvalsOnly() {
		changelog.SkipForEvalsOnly(&p, t, &records, log)
	}
	quarantined, err := runstate.ReadQuarantine(p, &records, &sum.Details)
	if err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	stage.SetQuarantine(quarantined)
	stage.SetEvidence(runstate.VerifyReceipt(tree, t))
	var inputs *inputDigest
	if d.Build != nil {
		inputs = newInputDigest(ctx, cfg, tree, d.Build)
		defer inputs.tree.Stop() // an ingest that fails never waits for it
		rs, ok, err := answerUnchanged(ctx, cfg, start, sum, inputs, d)
		if fe := (fenceError{}); errors.As(err, &fe) {
			return abort(sum, t, d, fe.err), fe.err
		}
		if err != nil {
			return abortRecorded(ctx, sum, t, d, start, records, err)
		}
		if ok {
			d.stageDone("unchanged", began)
			log.Info("ingest finished: inputs unchanged", zap.String("status", string(rs.Status)),
				zap.Int64("ingest_id", rs.IngestID), zap.Int64("unchanged_since", rs.Details.UnchangedSince),
				zap.Int64("duration_ms", rs.Details.DurationMS))
			return rs, nil
		}
	}
	// The benchmark files are read from here on, while the run's
	// transaction is opened (its lock, the workflow run and ledger rows,
	// the staging tables): the first rows wait in the stream's buffer.
	stagingStarted := time.Now()
	d.stageStart("benchmarks")
	bs := startBenchmarks(ctx, stage, p)
	w, err := d.Store.BeginRun(ctx, start)
	if err != nil {
		_ = bs.stop() // the abort's cause is BeginRun's error
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	defer w.Rollback(ctx)
	if w.Run().NoConclusion {
		noteNoConclusion(t, log, start)
	}
	// A caller that may have lost its right to write the run (a backfill
	// worker's claim) stops before the work, once it holds the run's lock.
	if err := fence(ctx, cfg); err != nil {
		_ = bs.stop() // the abort's cause is the fence's refusal
		return abort(sum, t, d, err), err
	}

	// Stored points of the run the ledger corrects are corrected before
	// the run's rows are written, so a corrected identity meets no stale
	// copy of its source.
	pointFixes, laterOverrides := d.runOverrides(start.Run.SourceRunID).SplitPointBackfills()
	var ores schema.OverrideResult
	if len(pointFixes.PointBackfills) > 0 {
		r, err := w.ApplyRunOverrides(ctx, pointFixes)
		if err != nil {
			_ = bs.stop()
			return abortRecorded(ctx, sum, t, d, start, records, err)
		}
		ores.Add(r)
	}

	log.Debug("staging benchmark rows")
	if err := bs.copyTo(ctx, w, d.Normalizer); err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	log.Info("benchmark rows staged", zap.Int64("rows", stage.Staged()), zap.Int64("files", sum.Stats.BenchmarkFiles),
		zap.Duration("took", time.Since(stagingStarted)))
	stats := stage.ReadRunStats(p.RunStats)
	// The records so far — the benchmark stage's, thousands on a large
	// run — are final: their ledger JSON is encoded while PostgreSQL
	// applies the run.
	ahead := runstate.EncodeAhead(records)
	env := &runstate.Env{Deps: d.stageDeps(), Start: start, Tree: tree, Plan: p, Tally: t, Sum: sum, Log: log,
		Records: &records, Changelog: cl, AgentX: stage.AgentX(), Quarantine: quarantined}
	applyStarted := time.Now()
	// The eval rows are read (files and configs, no database) while
	// PostgreSQL applies the benchmark rows; nothing else touches the
	// summary until both are done.
	evalRows := make(chan *evals.Rows, 1)
	go func() {
		read := time.Now()
		rows := evals.Read(env)
		log.Debug("evals read", zap.Duration("took", time.Since(read)))
		evalRows <- rows
	}()
	res, err := w.Apply(ctx, stats)
	ev := <-evalRows
	if err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	log.Info("run applied", zap.Int64("benchmark_new", res.BenchmarkNew), zap.Duration("took", time.Since(applyStarted)))
	if res.BenchmarkStaged != stage.Staged() {
		err := fmt.Errorf("store staged %d benchmark rows, the pipeline sent %d", res.BenchmarkStaged, stage.Staged())
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	applyResult(sum, res)
	d.stageDone("benchmarks", began)
	for _, s := range laterStages(w, ev) {
		stageStarted := time.Now()
		d.stageStart(s.name)
		if err := s.run(ctx, env); err != nil {
			err = fmt.Errorf("%s: %w", s.name, err)
			return abortRecorded(ctx, sum, t, d, start, records, err)
		}
		d.stageDone(s.name, stageStarted)
	}
	if nr := stage.NotRead(); len(nr) > 0 {
		t.Note(fmt.Sprintf("%s of benchmark artifacts not read: not JSON, so no rows (%s)",
			runstate.Plural(len(nr), "file", "files"), runstate.ListSome(nr, 3)))
	}
	if n := sum.Details.QuarantinedRows + sum.Details.QuarantinedEvalRows; n > 0 {
		t.Note(fmt.Sprintf("%s the producer quarantined (rejected_rows_*) were skipped: %d benchmark, %d eval",
			runstate.Plural(int(n), "row", "rows"), sum.Details.QuarantinedRows, sum.Details.QuarantinedEvalRows))
	}
	// Every file the run reads has been read: the tree's digest is
	// finished (from the sums taken while reading, and the files no stage
	// read) while PostgreSQL updates the curves.
	hashing := inputs.inBackground(ctx)
	// The ledger applies to what earlier ingests stored of the run too
	// (a point purged since, another attempt purged, retired GPU power).
	later, err := w.ApplyRunOverrides(ctx, laterOverrides)
	if err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	ores.Add(later)
	noteOverrides(t, sum, ores)
	curvesStarted := time.Now() // after the overrides: their deletions are part of the update
	d.stageStart("curves")
	view, err := w.UpdateLatestBenchmarks(ctx)
	if err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	if !cfg.DryRun {
		viewUpdated(sum, view)
	}
	d.stageDone("curves", curvesStarted)
	impactStarted := time.Now()
	d.stageStart("impact")
	sum.Details.AppendOnly = cl.Log.AppendOnly()
	accept := append(slices.Clone(cfg.AcceptCoverageLoss), d.Overrides.CoverageLossAccepted(start.Run.SourceRunID)...)
	if err := noteImpact(ctx, cfg.CoverageGuard, accept, w, view, sum, ev.Evidence()); err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	d.stageDone("impact", impactStarted)
	if !cl.Log.EvalsOnly() {
		sum.Details.NoBenchmarkData = noBenchmarkData(sum.Rows.Benchmark, len(p.Benchmark), expiredBenchmark, missingBenchmark, tree.ListingName)
	}
	finish(sum, t, d)
	if err := fence(ctx, cfg); err != nil {
		return abort(sum, t, d, err), err
	}
	if inputs != nil {
		waited := time.Now()
		h := <-hashing
		log.Debug("inputs hashed", zap.Duration("waited", time.Since(waited)))
		if h.err != nil && ctx.Err() != nil {
			return abortRecorded(ctx, sum, t, d, start, records, h.err)
		}
		if h.err != nil {
			log.Info("inputs not hashed: a rerun will read the run in full", zap.Error(h.err))
		}
		w.SetInputDigest(h.digest, h.index)
	}
	encoded := ahead.Encode(records)
	if err := publish(ctx, cfg, inputs, encoded, sum); err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	commitStarted := time.Now()
	d.stageStart("commit")
	if err := w.Finish(ctx, sum, encoded, cfg.DryRun); err != nil {
		return abortRecorded(ctx, sum, t, d, start, records, err)
	}
	d.stageDone("commit", commitStarted)
	// A dry run's ledger row was rolled back: its id names nothing.
	id := zap.Int64("ingest_id", sum.IngestID)
	if cfg.DryRun {
		sum.IngestID = 0
		id = zap.Bool("dry_run", true)
	}
	log.Info("ingest finished", zap.String("status", string(sum.Status)), id,
		zap.Int64("benchmark_new", sum.Rows.Benchmark.New), zap.Int64("benchmark_duplicate", sum.Rows.Benchmark.Duplicate),
		zap.Int64("duration_ms", sum.Details.DurationMS))
	return sum, nil
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
func (bs *benchmarkStream) copyTo(ctx context.Context, w RunWriter, n *benchmark.Normalizer) error {
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
	})
	parseErr := bs.stop() // stops the parser if the COPY ended early
	if copyErr != nil {
		return copyErr
	}
	if parseErr != nil {
		return fmt.Errorf("read benchmark files: %w", parseErr)
	}
	return nil
}

func applyResult(sum *schema.Summary, r schema.ApplyResult) {
	b := &sum.Rows.Benchmark
	b.New += r.BenchmarkNew
	b.Duplicate += r.BenchmarkDuplicate
	b.Skipped += r.Covered + r.StaleAttempt
	sum.Stats.CoveredByPerJobFiles += r.Covered // rows the pipeline could not attribute itself
	sum.Stats.RunStatsNew += r.RunStatsNew
	sum.Stats.RunStatsDuplicate += r.RunStatsDuplicate
	sum.Details.StaleAttemptRows += r.StaleAttempt
	sum.Details.BenchmarkRowsUpdated += r.BenchmarkUpdated
	sum.Details.ConfigsNew += r.ConfigsNew
	sum.Details.AvailabilityNew += r.AvailabilityNew
	sum.Details.RunStatsRows += r.RunStatsNew + r.RunStatsDuplicate
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
