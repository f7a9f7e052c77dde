package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/audit"
)

// AuditLedger reads the ledger rows that name any of runs, as source or
// merge run, for `ingest audit`.
func (s *Store) AuditLedger(ctx context.Context, repo string, runs []int64) ([]audit.Ingest, error) {
	rows, err := s.pool.Query(ctx, qAuditLedger, repo, runs)
	if err != nil {
		return nil, s.opts.explain("read the ledger", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Ingest, error) {
		var in audit.Ingest
		err := r.Scan(&in.ID, &in.RunID, &in.MergeRunID, &in.Status, &in.Error)
		return in, err
	})
	if err != nil {
		return nil, s.opts.explain("read the ledger", err)
	}
	return out, nil
}

// LedgerRunsCreated lists the runs created between since and until that
// the ledger holds a successful ingest of: the audit's side of the
// archive comparison.
func (s *Store) LedgerRunsCreated(ctx context.Context, repo string, since, until time.Time) ([]audit.LedgerRun, error) {
	rows, err := s.pool.Query(ctx, qLedgerRunsCreated, repo, since, until)
	if err != nil {
		return nil, s.opts.explain("read the ledger", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.LedgerRun, error) {
		var lr audit.LedgerRun
		err := r.Scan(&lr.ID, &lr.CreatedAt)
		lr.CreatedAt = lr.CreatedAt.UTC()
		return lr, err
	})
	if err != nil {
		return nil, s.opts.explain("read the ledger", err)
	}
	return out, nil
}
