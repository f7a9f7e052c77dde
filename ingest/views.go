package ingest

import (
	"context"
	"strings"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// ViewRefresher keeps the dashboard's materialized view (latest_benchmarks)
// in step with the tables.
type ViewRefresher interface {
	// RefreshLatestBenchmarks refreshes the view when changes are pending
	// (always when force is set).
	RefreshLatestBenchmarks(ctx context.Context, force bool) (schema.ViewRefresh, error)
	// RecordRefresh stores the summary of a committed ingest again, with
	// the refresh outcome.
	RecordRefresh(ctx context.Context, sum *schema.Summary) error
}

// RefreshAfterIngest refreshes latest_benchmarks after a committed ingest
// and adds the outcome to its summary (and to its ledger row). It does
// nothing after a dry run or an aborted ingest, which wrote nothing. The
// refresh is skipped when nothing changed since the last one; it also
// retries an earlier failed refresh. A failed refresh is a failure of the
// ingest (category run, status completed_with_failures): the run's rows are
// committed, but the dashboard does not show them until a refresh succeeds.
func RefreshAfterIngest(ctx context.Context, v ViewRefresher, sum *schema.Summary, log *zap.Logger) {
	if sum == nil || sum.DryRun || sum.Status == schema.StatusAborted {
		return
	}
	r, err := v.RefreshLatestBenchmarks(ctx, false)
	sum.Details.LatestBenchmarks = &r
	if err != nil {
		sum.Failures = append(sum.Failures, schema.Failure{Category: schema.CategoryRun, Artifact: r.View,
			Reason: refreshFailed + r.Error + "; the view is stale until the next ingest or `ingest refresh` succeeds"})
		sum.Status = schema.StatusCompletedWithFailures
	} else {
		log.Info("latest_benchmarks after the ingest", zap.String("refresh", r.Status), zap.Int64("changes", r.Changes),
			zap.Int64("took_ms", r.DurationMS))
	}
	if sum.IngestID == 0 {
		return // a purged run has no ledger row
	}
	if err := v.RecordRefresh(ctx, sum); err != nil {
		log.Error("could not record the view refresh in the ledger", zap.Error(err))
	}
}

// refreshFailed begins the failure a failed refresh adds to the summary of
// the ingest it followed (and to its ledger row).
const refreshFailed = "refresh failed: "

// isRefreshFailure says whether f is the failure of the view refresh that
// followed an ingest, not one of the ingest itself.
func isRefreshFailure(f schema.Failure) bool {
	return f.Category == schema.CategoryRun && f.File == "" && strings.HasPrefix(f.Reason, refreshFailed)
}
