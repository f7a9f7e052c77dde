package ingest

import (
	"context"
	"time"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// RecordAbort records an ingest that failed before it had a tree to read
// (`ingest run` whose fetch from GitHub failed): the summary of the abort
// and, unless this is a dry run, its ledger row, with the run id and
// attempt of cfg (attempt 0 when it is not known) and cause as the reason.
// It returns the summary and the error of the abort, which is the
// cancellation's cause when ctx was cancelled.
func RecordAbort(ctx context.Context, cfg Config, d Deps, started time.Time, cause error) (*schema.Summary, error) {
	sum := &schema.Summary{SchemaVersion: schema.SummarySchemaVersion, Run: cfg.Run, Target: cfg.Target,
		DryRun: cfg.DryRun, StartedAt: started, Failures: []schema.Failure{}, Notes: []string{}}
	sum.Links.IngestRun = cfg.IngestRunURL
	sum.Links.SourceRun = cfg.Meta.HTMLURL
	t := runstate.NewTally(sum)
	if cfg.Run.SourceRunAttempt == 0 {
		t.Note("run attempt unknown (GitHub did not say it before the abort): recorded as attempt 0")
	}
	run := cfg.Run
	if run.MergeRunID == 0 {
		run.MergeRunID, run.MergeRunAttempt = run.SourceRunID, run.SourceRunAttempt
	}
	sum.Run = run
	start := schema.RunStart{Run: run, Meta: cfg.Meta, MergeMeta: cfg.MergeMeta, Target: cfg.Target,
		StartedAt: started, ToolVersion: cfg.ToolVersion}
	return abortRecorded(ctx, sum, t, d, start, nil, cause)
}
