package backfill

import (
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// Progress is told how the backfill goes. Counts are the pass's, across
// every worker.
type Progress interface {
	Start(pass schema.BackfillPass, c schema.BackfillCounts)
	// Working announces the run this worker claimed.
	Working(run schema.BackfillRun)
	// Settled reports a run this worker settled; sum is nil when no ingest ran.
	Settled(run schema.BackfillRun, out schema.BackfillOutcome, sum *schema.Summary, c schema.BackfillCounts, eta time.Duration)
	Finish(c schema.BackfillCounts)
}

// logProgress writes one structured line per settled run: for CI.
type logProgress struct{ log *zap.Logger }

// NewLogProgress reports progress as zap lines.
func NewLogProgress(log *zap.Logger) Progress { return logProgress{log: log.Named("backfill")} }

func (p logProgress) Start(pass schema.BackfillPass, c schema.BackfillCounts) {
	p.log.Info("backfill started", zap.Int64("backfill", pass.ID), zap.Int64("runs", c.Total),
		zap.Int64("done", c.Done()), zap.Int64("pending", c.Pending))
}

func (p logProgress) Working(run schema.BackfillRun) {
	p.log.Debug("backfill run claimed", zap.Int64("run_id", run.RunID), zap.Int("attempt", run.Attempt))
}

func (p logProgress) Settled(run schema.BackfillRun, out schema.BackfillOutcome, sum *schema.Summary, c schema.BackfillCounts, eta time.Duration) {
	fields := []zap.Field{zap.Int64("run_id", run.RunID), zap.Int("attempt", out.Attempt), zap.String("state", string(out.State)),
		zap.Duration("took", out.Duration), zap.Int64("done", c.Done()), zap.Int64("of", c.Total),
		zap.Int64("failed", c.Failed), zap.Duration("eta", eta.Round(time.Second))}
	if out.IngestID != 0 {
		fields = append(fields, zap.Int64("ingest_id", out.IngestID), zap.String("status", string(out.IngestStatus)))
	}
	if sum != nil && out.State == schema.BackfillIngested {
		fields = append(fields, zap.Int64("benchmark_new", sum.Rows.Benchmark.New), zap.Int64("benchmark_duplicate", sum.Rows.Benchmark.Duplicate))
	}
	if out.Detail != "" {
		fields = append(fields, zap.String("detail", out.Detail))
	}
	if out.State == schema.BackfillFailed {
		p.log.Warn("backfill run failed", fields...)
		return
	}
	p.log.Info("backfill run "+string(out.State), fields...)
}

func (p logProgress) Finish(c schema.BackfillCounts) {
	p.log.Info("backfill worker done", zap.Int64("runs", c.Total), zap.Int64("ingested", c.Ingested),
		zap.Int64("skipped", c.Skipped), zap.Int64("failed", c.Failed), zap.Int64("pending", c.Pending))
}
