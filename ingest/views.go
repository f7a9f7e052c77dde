package ingest

import (
	"context"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// ViewRefresher applies to the dashboard's view (latest_benchmarks) the
// changes still pending after an ingest.
type ViewRefresher interface {
	// RefreshLatestBenchmarks applies pending changes to the view
	// (recomputes it whole when force is set).
	RefreshLatestBenchmarks(ctx context.Context, force bool) (schema.ViewRefresh, error)
	// RecordRefresh stores the summary of a committed ingest again, with
	// the refresh outcome.
	RecordRefresh(ctx context.Context, sum *schema.Summary) error
}

// viewUpdated puts the update of latest_benchmarks the run's transaction
// made into its summary. A failed update is a failure of the ingest
// (category run): the run's rows are committed, but the dashboard does not
// show them until a refresh succeeds — RefreshAfterIngest retries at once.
// An update with nothing to do (skipped) leaves the outcome to the refresh
// after the commit.
func viewUpdated(sum *schema.Summary, r schema.ViewRefresh) {
	if r.Status == schema.RefreshSkipped {
		return // the refresh after the commit says so
	}
	sum.Details.LatestBenchmarks = &r
	if r.Status == schema.RefreshFailed {
		sum.Failures = append(sum.Failures, refreshFailure(r))
	}
}

func refreshFailure(r schema.ViewRefresh) schema.Failure {
	return schema.Failure{Category: schema.CategoryRun, Artifact: r.View,
		Reason: refreshFailed + r.Error + "; the view is stale until the next ingest or `ingest refresh` succeeds"}
}

// RefreshAfterIngest applies, after a committed ingest, the changes to
// latest_benchmarks that are still pending: those the ingest's own update
// could not apply (it failed), or that another writer committed. Normally
// there are none and the summary keeps the ingest's own update. When a
// refresh runs, its outcome joins the summary (and its ledger row): a
// refresh that fails is a failure of the ingest (category run, status
// completed_with_failures); one that succeeds after the ingest's own
// update failed takes that failure back. It does nothing after a dry run
// or an aborted ingest, which wrote nothing.
func RefreshAfterIngest(ctx context.Context, v ViewRefresher, sum *schema.Summary, log *zap.Logger) {
	if sum == nil || sum.DryRun || sum.Status == schema.StatusAborted {
		return
	}
	r, err := v.RefreshLatestBenchmarks(ctx, false)
	own := sum.Details.LatestBenchmarks
	if err == nil && r.Status == schema.RefreshSkipped && own != nil {
		return // the ingest's own update stands; nothing to record again
	}
	if err == nil && own != nil && own.Status == schema.RefreshRefreshed && r.Status == schema.RefreshRefreshed {
		r.Changes += own.Changes
		r.DurationMS += own.DurationMS
		r.Curves += own.Curves
		r.Added += own.Added
		r.Removed += own.Removed
		r.Moved += own.Moved
	}
	sum.Details.LatestBenchmarks = &r
	if own != nil && own.Status == schema.RefreshFailed {
		// This outcome replaces that of the ingest's own update.
		sum.Failures = slices.DeleteFunc(sum.Failures, isRefreshFailure)
	}
	if err != nil {
		sum.Failures = append(sum.Failures, refreshFailure(r))
		if sum.Status != schema.StatusPurged { // a purged run stays purged: nothing of it was written
			sum.Status = schema.StatusCompletedWithFailures
		}
	} else {
		if own != nil && own.Status == schema.RefreshFailed && sum.FailureCount() == 0 && sum.Details.NoBenchmarkData == "" {
			sum.Status = schema.StatusSucceeded
		}
		log.Info("latest_benchmarks after the ingest", zap.String("refresh", r.Status), zap.Int64("changes", r.Changes),
			zap.Int64("took_ms", r.DurationMS))
	}
	if sum.IngestID == 0 {
		return // no ledger row to update
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
