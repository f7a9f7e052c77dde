// Package stagetest sets a stage's test up as the pipeline sets the stage
// up, without the pipeline and without a database of the test's own: a
// generated run tree is read, its benchmark rows are staged and applied in
// a run transaction on the test process's shared database (pgtest.RunTx),
// rolled back when the test ends. A stage's test then runs the stage
// against that transaction, its writer, and checks what the stage counted
// against what the tree was generated to hold.
package stagetest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// Now is the clock of every run set up here.
func Now() time.Time { return time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC) }

// Run is a generated run once its benchmark rows are applied: what the
// later stages start from.
type Run struct {
	// Env is what the pipeline hands a later stage.
	Env *runstate.Env
	// W is the run's transaction, rolled back when the test ends.
	W *store.RunTx
	// Manifest is what the tree was generated to hold.
	Manifest generate.Manifest
	// Applied is what the store reported of the benchmark rows.
	Applied schema.ApplyResult
	// Staged is how many benchmark rows the stage sent.
	Staged int64
}

// Open generates a run with o (o.RunID names it: tests that run at once
// use distinct ids), reads it and applies its benchmark rows, as the
// pipeline does before the later stages. Any error fails the test.
func Open(t *testing.T, o generate.Options) *Run {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	m, err := generate.Write(dir, o)
	if err != nil {
		t.Fatalf("stagetest: generate: %v", err)
	}
	log := zaptest.NewLogger(t)
	tree, err := source.Open(ctx, dir, log)
	if err != nil {
		t.Fatalf("stagetest: open the tree: %v", err)
	}
	t.Cleanup(func() { tree.Close() })
	cat, err := catalog.Default()
	if err != nil {
		t.Fatalf("stagetest: %v", err)
	}
	ov, err := overrides.Load()
	if err != nil {
		t.Fatalf("stagetest: %v", err)
	}
	deps := runstate.Deps{Catalog: cat, Normalizer: benchmark.NewNormalizer(cat), Overrides: ov, Log: log, Now: Now}
	attempt := o.Attempt
	if attempt == 0 {
		attempt = 1
		if o.Retries > 0 {
			attempt = 2
		}
	}
	runID := o.RunID
	if runID == 0 {
		runID = generate.DefaultRunID
	}
	meta := schema.RunMeta{Name: "stagetest", CreatedAt: Now().Add(-time.Hour)}
	start := schema.RunStart{Run: schema.RunIdentity{Repo: "SemiAnalysisAI/InferenceX", SourceRunID: runID, SourceRunAttempt: attempt,
		MergeRunID: runID, MergeRunAttempt: attempt}, Meta: meta, MergeMeta: meta, Target: "test", StartedAt: Now(), ToolVersion: "stagetest"}
	sum := &schema.Summary{}
	tally := runstate.NewTally(sum)
	p := runstate.NewPlan(tree)
	var records []*runstate.Record
	stage := benchmarks.New(deps, start.Run, "", tally, &records)
	cl := changelog.Read(p, start, tally, &records)
	if cl.Log.EvalsOnly() {
		changelog.SkipForEvalsOnly(&p, tally, &records, log)
	}
	quarantined, err := runstate.ReadQuarantine(p, &records, &sum.Details)
	if err != nil {
		t.Fatalf("stagetest: %v", err)
	}
	stage.SetQuarantine(quarantined)
	stage.SetEvidence(runstate.VerifyReceipt(tree, tally))

	w := pgtest.RunTx(t, start)
	staged, err := stageBenchmarks(ctx, stage, p, w)
	if err != nil {
		t.Fatalf("stagetest: stage benchmark rows: %v", err)
	}
	ranking := stage.Winners().Result()
	res, err := w.Apply(ctx, stage.ReadRunStats(p.RunStats), ranking.Write, ranking.Adopted)
	if err != nil {
		t.Fatalf("stagetest: apply benchmark rows: %v", err)
	}
	sum.AddCounters(ranking.Counts(res))
	env := &runstate.Env{Deps: deps, Start: start, Tree: tree, Plan: p, Tally: tally, Sum: sum, Log: log,
		Records: &records, Changelog: cl, AgentX: stage.AgentX(), Points: stage.Winners().Points(), Quarantine: quarantined}
	return &Run{Env: env, W: w, Manifest: m, Applied: res, Staged: staged}
}

// stageBenchmarks streams the plan's benchmark rows into w's staging
// table, the parser running while COPY sends.
func stageBenchmarks(ctx context.Context, stage *benchmarks.Stage, p runstate.Plan, w *store.RunTx) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make(chan schema.StagedBenchmark, 256)
	parsed := make(chan error, 1)
	go func() { parsed <- stage.Stream(ctx, p, rows) }()
	n, copyErr := w.StageBenchmarks(ctx, func() (schema.StagedBenchmark, bool, error) {
		r, ok := <-rows
		return r, ok, nil
	}, stage.Winners().Add)
	cancel()
	for range rows {
	}
	if err := <-parsed; copyErr == nil && err != nil {
		return n, err
	}
	return n, copyErr
}
