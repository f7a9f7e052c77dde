package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// ErrNoSummary means the ledger holds no finished ingest of the run.
var ErrNoSummary = errors.New("no ingest of this run is recorded")

// RecordAborted writes the ledger row of an ingest that was rolled back, in
// its own transaction, and returns its id. Nothing else is written.
func (s *Store) RecordAborted(ctx context.Context, start schema.RunStart, sum *schema.Summary, artifacts json.RawMessage, cause error) (int64, error) {
	if artifacts == nil {
		artifacts = json.RawMessage("[]")
	}
	enc, err := json.Marshal(sum)
	if err != nil {
		return 0, fmt.Errorf("encode summary: %w", err)
	}
	var id int64
	err = s.pool.QueryRow(ctx, qInsertLedgerAborted, start.Run.Repo, start.Run.SourceRunID, start.Run.SourceRunAttempt,
		nullInt64(start.Run.MergeRunID), nullInt(start.Run.MergeRunAttempt), start.Target, start.StartedAt.UTC(),
		sum.FinishedAt.UTC(), sum.Details.DurationMS, cause.Error(), enc, []byte(artifacts), start.ToolVersion).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record aborted ingest of run %d: %w", start.Run.SourceRunID, err)
	}
	return id, nil
}

// LatestSummary returns the summary of the newest finished ingest of a run
// (of one attempt, or of any when attempt is 0).
func (s *Store) LatestSummary(ctx context.Context, runID int64, attempt int) (*schema.Summary, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, qLatestSummary, runID, attempt).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", runID, ErrNoSummary)
	}
	if err != nil {
		return nil, fmt.Errorf("read summary of run %d: %w", runID, err)
	}
	var sum schema.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		return nil, fmt.Errorf("decode stored summary of run %d: %w", runID, err)
	}
	return &sum, nil
}
