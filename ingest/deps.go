package ingest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/ingest/stages/telemetry"
	"github.com/inferencex/ingest/ingest/stages/traces"
	"github.com/inferencex/ingest/schema"
)

// Store is what the pipeline needs from the database.
type Store interface {
	BeginRun(ctx context.Context, start schema.RunStart) (RunWriter, error)
	outsideRun
}

// outsideRun is what the pipeline writes outside a run's transaction: the
// ledger rows of aborted, purged and unchanged runs, and the overrides.
type outsideRun interface {
	RecordAborted(ctx context.Context, start schema.RunStart, sum *schema.Summary, artifacts json.RawMessage, cause error) (int64, error)
	RecordPurged(ctx context.Context, start schema.RunStart, sum *schema.Summary) (int64, error)
	ledger
	overrideApplier
}

// overrideApplier applies the run-override ledger to stored data in a
// transaction of its own (a purged run's ingest, which opens none),
// bringing latest_benchmarks up to date in it and calling judge with what
// that does to the curves before the commit; judge's error rolls it back.
type overrideApplier interface {
	ApplyOverridesJudged(ctx context.Context, plan schema.OverridePlan, dryRun bool, toolVersion string,
		judge func(ctx context.Context, view schema.ViewRefresh, curves []schema.CurveImpact) error) (schema.OverrideResult, schema.ViewRefresh, int64, error)
}

// ledger is what a rerun with unchanged inputs needs: the run's prior
// ingest, and a ledger row answered from it.
type ledger interface {
	PriorIngest(ctx context.Context, run schema.RunIdentity) (schema.PriorIngest, error)
	// PublishedEvalScores lists the newest scores other GitHub runs than
	// runID stored for each model and task: the answer's eval evidence
	// takes them as they are now.
	PublishedEvalScores(ctx context.Context, runID int64, tasks []schema.EvalTask) (map[schema.EvalTask][]schema.PublishedScore, error)
	RecordUnchanged(ctx context.Context, start schema.RunStart, p schema.PriorIngest, digest, files []byte,
		sum *schema.Summary, dryRun bool, beforeCommit func(context.Context) error) (bool, error)
}

// RunWriter is the open transaction of one run.
type RunWriter interface {
	Run() schema.WrittenRun
	// StageBenchmarks stages the rows next gives until it reports no
	// more, telling seen of each; a row is not used once next is called
	// again.
	StageBenchmarks(ctx context.Context, next func() (schema.StagedBenchmark, bool, error), seen func(schema.StagedCopy)) (int64, error)
	// Apply writes what was staged: of the benchmark rows, those whose
	// seq write lists (the benchmark stage's winners).
	Apply(ctx context.Context, stats []schema.RunStat, write, adopted []int32) (schema.ApplyResult, error)
	SetInputDigest(digest, files []byte)
	// UpdateLatestBenchmarks brings latest_benchmarks up to date with the
	// run's writes, in its transaction, after the last of them.
	UpdateLatestBenchmarks(ctx context.Context) (schema.ViewRefresh, error)
	// CurveImpact lists, after UpdateLatestBenchmarks, the curves it
	// touched with their rows before and after.
	CurveImpact(ctx context.Context) ([]schema.CurveImpact, error)
	// PublishedEvalScores lists the newest scores other runs stored for
	// each model and task (the report's eval evidence).
	PublishedEvalScores(ctx context.Context, tasks []schema.EvalTask) (map[schema.EvalTask][]schema.PublishedScore, error)
	// ApplyRunOverrides applies the ledger entries of the run (plan) to
	// what is stored of it, inside the run's transaction.
	ApplyRunOverrides(ctx context.Context, plan schema.OverridePlan) (schema.OverrideResult, error)
	Finish(ctx context.Context, sum *schema.Summary, artifacts json.RawMessage, dryRun bool) error
	Rollback(ctx context.Context) error
	evals.Writer
	traces.Writer
	telemetry.Writer
	changelog.Writer
}

// Deps are the collaborators of a run.
type Deps struct {
	Store      Store
	Catalog    *catalog.Catalog
	Normalizer *benchmark.Normalizer
	Overrides  *overrides.Overrides
	Log        *zap.Logger
	// Now is the clock; golden tests inject a fixed one.
	Now func() time.Time
	// Arrow allocates the telemetry stage's Arrow buffers; nil means a
	// pool of the stage's own. Tests pass a checked allocator to prove
	// nothing leaks.
	Arrow memory.Allocator
	// Build identifies the binary and the catalog and override files it
	// loaded: with the tree and the run's options it makes the digest of
	// an ingest's inputs, which the ledger keeps so that a rerun of the
	// same inputs on unchanged data answers from it. nil computes no
	// digest, so every ingest reads its run in full.
	Build []byte
	// LargeHeap, when set, is called by a stage about to hold a large
	// working set bounded by its own budget (telemetry); the process may
	// collect garbage less often until the returned done is called
	// (gctarget.Target.LargeHeap).
	LargeHeap func() (done func())
	// Progress, when set, is told each stage of a run as it starts and
	// ends, and what the stage counts as it goes (benchmark files,
	// telemetry series); the CLI draws it on a terminal. nil costs nothing.
	Progress Progress
}

// Progress is told how far the stages of a run have got.
type Progress = runstate.Progress

// stageDeps are the collaborators the stages see.
func (d Deps) stageDeps() runstate.Deps {
	return runstate.Deps{Catalog: d.Catalog, Normalizer: d.Normalizer, Overrides: d.Overrides, Log: d.Log, Now: d.Now, Arrow: d.Arrow,
		LargeHeap: d.LargeHeap, Progress: d.Progress}
}

// stageStart tells Progress, when set, that stage begins.
func (d Deps) stageStart(stage string) {
	if d.Progress != nil {
		d.Progress.Start(stage)
	}
}

// stageDone logs a stage's wall time at Info: "stage finished" with the
// fields stage and took. Each stage of a run logs it as it ends:
// "benchmarks" (from the start of Run to the benchmark rows applied), then
// each later stage by name (evals, traces, telemetry, changelog), then
// "curves" (latest_benchmarks brought up to date in the run's transaction),
// "impact" (what that did to the published curves, the coverage guard, the
// eval evidence), then "commit"; a rerun answered from the ledger logs
// "unchanged". The line is the stage times' one observable: operators read
// it in the JSON log, and the bench command reads it back.
func (d Deps) stageDone(stage string, since time.Time) {
	took := time.Since(since)
	if d.Log != nil {
		d.Log.Info("stage finished", zap.String("stage", stage), zap.Duration("took", took))
	}
	if d.Progress != nil {
		d.Progress.Done()
	}
}

// Config says which run to ingest and how.
type Config struct {
	Run schema.RunIdentity
	// Meta is run metadata given by the caller (flags); it wins over what
	// the tree's artifacts.json says.
	Meta schema.RunMeta
	// MergeMeta is what the caller knows of the merge (trigger) run when it
	// differs from the source run (Run.MergeRunID): its created_at and
	// run_started_at date the run, its html_url is the report's merge link.
	MergeMeta   schema.RunMeta
	Target      string
	DryRun      bool
	ToolVersion string
	// IngestRunURL links the workflow run doing the ingest, when known.
	IngestRunURL string
	// Started is when the command began (zero: when Run begins). The
	// summary's started_at and so its duration count from it, so that
	// what the command did first (`ingest run`'s download, opening the
	// tree) is in the report's "took".
	Started time.Time
	// SourceNotes are the artifact source's notes for the report: which
	// artifacts came from the archive, which run facts were inferred.
	SourceNotes []string
	// TreeDigest, when set, is the tree's digest started by the caller
	// before opening it (source.StartDigest), so that hashing overlaps
	// the opening; nil: Run hashes the tree itself when Deps.Build is set.
	TreeDigest *source.Digesting
	// Reread ingests the run in full even when its inputs are those of its
	// last ingest and nothing was written since (answerUnchanged).
	Reread bool
	// Fence, when set, is called once the run's lock is held and again
	// just before the run's transaction commits; an error aborts the
	// ingest, nothing is written and no ledger row is recorded. A backfill
	// worker checks there that it still holds its claim on the run, so
	// that a worker whose claim was lost neither redoes nor commits a run
	// another worker may have ingested.
	Fence func(ctx context.Context) error
	// CoverageGuard is warn (the default, "") or refuse: a run that would
	// shrink a published curve (impact's coverage loss: points not measured
	// again, arms, the concurrency span, a range or frontier region lost
	// beyond run-to-run noise) is reported, or
	// rolled back, unless AcceptCoverageLoss names the curve (its key).
	CoverageGuard      string
	AcceptCoverageLoss []string
	// Publish, when set, is called just before the run's transaction
	// commits with the run, the sha256 of its tree and the tree's file
	// index (source.FileSums; both nil when no digest was computed) and
	// the ledger's artifact records; what it returns is the
	// report's publication section (a staged ingest, or a promotion
	// compared with the staged ingest of the run). An error aborts the
	// ingest, recorded in the ledger (a promotion whose inputs differ
	// under --require-staged). A rerun whose prior ingest has no
	// publication section is read in full.
	Publish func(ctx context.Context, run schema.RunIdentity, tree, index []byte, records json.RawMessage) (*schema.Publication, error)
}

// Beginner is a store whose BeginRun returns its own concrete writer type.
type Beginner[W RunWriter] interface {
	BeginRun(ctx context.Context, start schema.RunStart) (W, error)
	outsideRun
}

// AdaptStore presents a store with a concrete writer type as a Store: Go
// has no covariant results, so only BeginRun is wrapped; the other methods
// are the store's own.
func AdaptStore[W RunWriter](s Beginner[W]) Store { return adapted[W]{s} }

type adapted[W RunWriter] struct{ Beginner[W] }

func (a adapted[W]) BeginRun(ctx context.Context, start schema.RunStart) (RunWriter, error) {
	w, err := a.Beginner.BeginRun(ctx, start)
	if err != nil {
		return nil, err // not a nil W in a non-nil RunWriter
	}
	return w, nil
}
