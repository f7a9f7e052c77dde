package store

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Pool is the store's pool, for this package's tests' own queries.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// ExecInRun runs a statement in the run's transaction: a test's stand-in
// for a later stage that rewrites rows the run wrote.
func (t *RunTx) ExecInRun(ctx context.Context, sql string, args ...any) error {
	_, err := t.tx.Exec(ctx, sql, args...)
	return err
}

// QueryIntInRun reads one integer in the run's transaction (its scratch
// tables are visible there only).
func (t *RunTx) QueryIntInRun(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, sql, args...).Scan(&n)
	return n, err
}
