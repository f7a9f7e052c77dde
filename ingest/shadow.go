package ingest

import (
	"context"
	"fmt"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/schema"
)

// ShadowWriter receives what the database-free stages of an ingest would
// write: the eval rows and samples, and the changelog. `ingest compare`
// keeps them in memory; nothing reaches a database.
type ShadowWriter interface {
	evals.Writer
	changelog.Writer
}

// Shadow is a run as an ingest reads it, without a database: the run's
// identity, every staged copy of every benchmark point (the store picks
// one winner per point, see schema.StagedBenchmark), the run stats, and
// the summary of what was read. Evals and the changelog went to the
// ShadowWriter.
type Shadow struct {
	Start      schema.RunStart
	Benchmarks []schema.StagedBenchmark
	RunStats   []schema.RunStat
	Summary    *schema.Summary
}

// ReadShadow reads tree exactly as Run does up to the store: the run's
// identity and metadata, the plan, the changelog, the quarantine, the
// benchmark stream, the run stats, the evals with their samples and the
// changelog rows. The traces and telemetry stages, which need the stored
// rows, are not run. It writes nothing; cfg.DryRun is irrelevant.
func ReadShadow(ctx context.Context, cfg Config, tree *source.Tree, d Deps, w ShadowWriter) (*Shadow, error) {
	started := d.Now()
	sum := &schema.Summary{SchemaVersion: schema.SummarySchemaVersion, Run: cfg.Run, Target: cfg.Target, DryRun: true,
		StartedAt: started, Failures: []schema.Failure{}, Notes: []string{}}
	t := runstate.NewTally(sum)
	if tree.ListingErr != nil {
		return nil, fmt.Errorf("run tree listing: %w", tree.ListingErr)
	}
	start, err := runStart(cfg, tree, started, t)
	if err != nil {
		return nil, err
	}
	sum.Run = start.Run
	for _, p := range tree.Problems {
		t.Fail(schema.CategoryRun, p.Artifact, p.File, p.Reason)
	}
	p := runstate.NewPlan(tree)
	var records []*runstate.Record
	stage := benchmarks.New(d.stageDeps(), start.Run, start.Meta.HeadSHA, t, &records)
	cl := changelog.Read(p, start, t, &records)
	if cl.Log.EvalsOnly() {
		changelog.SkipForEvalsOnly(&p, t, &records, d.Log)
	}
	quarantined, err := runstate.ReadQuarantine(p, &records, &sum.Details)
	if err != nil {
		return nil, err
	}
	stage.SetQuarantine(quarantined)
	stage.SetEvidence(runstate.VerifyReceipt(tree, t))

	sh := &Shadow{Start: start, Summary: sum}
	// The stream's metrics maps are kept (never released to the
	// normalizer's pool): the compare holds every copy.
	bs := startBenchmarks(ctx, stage, p)
	for r := range bs.rows {
		sh.Benchmarks = append(sh.Benchmarks, r)
	}
	if err := <-bs.parsed; err != nil {
		return nil, fmt.Errorf("read benchmark files: %w", err)
	}
	bs.cancel()
	sh.RunStats = stage.ReadRunStats(p.RunStats)
	env := &runstate.Env{Deps: d.stageDeps(), Start: start, Tree: tree, Plan: p, Tally: t, Sum: sum, Log: d.Log.Named("ingest"),
		Records: &records, Changelog: cl, AgentX: stage.AgentX(), Quarantine: quarantined}
	if err := evals.Read(env).Write(ctx, w); err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	if err := changelog.Run(ctx, w, env); err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	t.Close()
	return sh, nil
}
