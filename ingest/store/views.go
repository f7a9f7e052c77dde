package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// LatestBenchmarksView is the view the dashboard charts from.
const LatestBenchmarksView = schema.LatestBenchmarksView

// RefreshLatestBenchmarks applies the changes other writers committed
// (statements run by hand, an ingest whose own update failed) to
// latest_benchmarks when any are pending, or recomputes every curve when
// force is set, in a transaction of its own: readers keep the old rows
// until it commits. An ingest updates the view for its own run before it
// commits (RunTx.UpdateLatestBenchmarks), so after an ingest this is
// normally skipped. A failure is recorded in materialized_view_state and
// returned both in the result and as the error; the marks stay, so the
// view reads as stale and the next refresh retries.
func (s *Store) RefreshLatestBenchmarks(ctx context.Context, force bool) (schema.ViewRefresh, error) {
	r := schema.ViewRefresh{View: LatestBenchmarksView}
	if err := s.pool.QueryRow(ctx, qViewPending).Scan(&r.Changes); err != nil {
		return s.refreshFailed(ctx, r, 0, fmt.Errorf("read change marks: %w", err))
	}
	if r.Changes == 0 && !force {
		r.Status = schema.RefreshSkipped
		return r, nil
	}
	began := time.Now()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.refreshFailed(ctx, r, 0, fmt.Errorf("begin: %w", err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	o, err := updateCurves(ctx, tx, true, force, s.opts.explain)
	if err == nil {
		_, err = tx.Exec(ctx, qViewRefreshedCurves, time.Since(began).Milliseconds())
	}
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return s.refreshFailed(ctx, r, time.Since(began), err)
	}
	took := time.Since(began)
	r = o.refresh(took)
	s.log.Info("latest_benchmarks refreshed", zap.Int64("changes", r.Changes), zap.Int64("curves", r.Curves),
		zap.Duration("took", took))
	return r, nil
}

func (s *Store) refreshFailed(ctx context.Context, r schema.ViewRefresh, took time.Duration, cause error) (schema.ViewRefresh, error) {
	r.Status = schema.RefreshFailed
	r.DurationMS = took.Milliseconds()
	r.Error = wording.OneLine(cause.Error(), 0)
	// Recorded even when ctx was cancelled: the state must say why the view
	// is stale.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(rctx, qViewRefreshFailed, r.DurationMS, r.Error); err != nil {
		s.log.Error("could not record the failed refresh of latest_benchmarks", zap.Error(err))
	}
	s.log.Error("latest_benchmarks refresh failed: the view is stale until the next refresh", zap.Error(cause))
	return r, fmt.Errorf("refresh %s: %w", LatestBenchmarksView, cause)
}

// LatestBenchmarksState reads the refresh state of latest_benchmarks; ok
// is false when the schema predates its bookkeeping (migration 000006).
func (s *Store) LatestBenchmarksState(ctx context.Context) (v schema.ViewState, ok bool, err error) {
	v = schema.ViewState{View: LatestBenchmarksView}
	if err := s.pool.QueryRow(ctx, qViewPresent).Scan(&ok); err != nil || !ok {
		return v, false, err
	}
	var lastErr *string
	err = s.pool.QueryRow(ctx, qViewState).Scan(&v.RefreshedAt, &v.LastAttemptAt, &v.LastDurationMS, &lastErr,
		&v.PendingChanges, &v.StaleSince, &v.Rows)
	if err != nil {
		return v, false, fmt.Errorf("read the state of %s: %w", LatestBenchmarksView, err)
	}
	if lastErr != nil {
		v.LastError = *lastErr
	}
	v.Stale = v.PendingChanges > 0
	return v, true, nil
}

// RecordRefresh stores the summary of a committed ingest again, with the
// outcome of the view refresh that followed its commit.
func (s *Store) RecordRefresh(ctx context.Context, sum *schema.Summary) error {
	enc, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if _, err := s.pool.Exec(ctx, qLedgerAfterRefresh, sum.IngestID, enc, string(sum.Status)); err != nil {
		return fmt.Errorf("record the view refresh in ingest %d: %w", sum.IngestID, err)
	}
	return nil
}
