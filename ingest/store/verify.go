package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// verifiedTables are the tables whose rows name their run, ingest and
// source artifact, and whose count an ingest reports.
var verifiedTables = []string{"benchmark_results", "eval_results", "run_stats"}

// ReadBackRun reads back what the database holds of one run for `ingest
// verify`: the ledger's finished ingests of it, its rows and their
// provenance, and the run's rows latest_benchmarks serves now and once
// every curve is recomputed by the rules — in a transaction that is always
// rolled back, so nothing changes (the recompute locks the curves while
// it runs).
func (s *Store) ReadBackRun(ctx context.Context, repo string, runID int64) (schema.RunReadBack, error) {
	rb := schema.RunReadBack{Stored: map[string]int64{}, ForeignIngest: map[string]int64{}, UnrecordedArtifact: map[string]int64{}}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return rb, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	rows, err := tx.Query(ctx, qVerifyIngests, repo, runID)
	if err != nil {
		return rb, s.opts.explain("read the run's ingests", err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return rb, s.opts.explain("read the run's ingests", err)
	}
	for _, raw := range raws {
		var sum schema.Summary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return rb, fmt.Errorf("decode a summary of run %d: %w", runID, err)
		}
		rb.Ingests = append(rb.Ingests, sum)
		if sum.Details.OverrideRowsDeleted > 0 || sum.Details.OverrideRowsRewritten > 0 || sum.Details.PurgedRun {
			rb.OverridesTouched = true
		}
	}
	for _, table := range verifiedTables {
		var n, foreign, unrecorded int64
		q := fmt.Sprintf(qVerifyTable, pgx.Identifier{table}.Sanitize())
		if err := tx.QueryRow(ctx, q, repo, runID).Scan(&n, &foreign, &unrecorded); err != nil {
			return rb, s.opts.explain("count the run's rows in "+table, err)
		}
		rb.Stored[table], rb.ForeignIngest[table], rb.UnrecordedArtifact[table] = n, foreign, unrecorded
	}
	var applied bool
	if err := tx.QueryRow(ctx, qVerifyOverridesApplied, runID).Scan(&applied); err != nil {
		return rb, s.opts.explain("read the override applications", err)
	}
	rb.OverridesTouched = rb.OverridesTouched || applied

	if rb.Shown, err = s.shownIDs(ctx, tx, repo, runID); err != nil {
		return rb, err
	}
	if _, err := updateCurves(ctx, tx, true, true, s.opts.explain); err != nil {
		return rb, err
	}
	if rb.Expected, err = s.shownIDs(ctx, tx, repo, runID); err != nil {
		return rb, err
	}
	return rb, nil
}

func (s *Store) shownIDs(ctx context.Context, tx pgx.Tx, repo string, runID int64) ([]int64, error) {
	rows, err := tx.Query(ctx, qVerifyShown, repo, runID)
	if err != nil {
		return nil, s.opts.explain("read latest_benchmarks", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, s.opts.explain("read latest_benchmarks", err)
	}
	return ids, nil
}
