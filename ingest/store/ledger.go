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
	msg := cause.Error()
	return s.recordOutcome(ctx, start, sum, artifacts, schema.StatusAborted, &msg)
}

// RecordPurged writes the ledger row (status purged) of an ingest of a
// run attempt the run overrides purge, in its own transaction, and
// returns its id. Nothing of the run is written.
func (s *Store) RecordPurged(ctx context.Context, start schema.RunStart, sum *schema.Summary) (int64, error) {
	return s.recordOutcome(ctx, start, sum, nil, schema.StatusPurged, nil)
}

func (s *Store) recordOutcome(ctx context.Context, start schema.RunStart, sum *schema.Summary, artifacts json.RawMessage,
	status schema.Status, cause *string) (int64, error) {
	if artifacts == nil {
		artifacts = json.RawMessage("[]")
	}
	enc, err := json.Marshal(sum)
	if err != nil {
		return 0, fmt.Errorf("encode summary: %w", err)
	}
	var id int64
	err = s.pool.QueryRow(ctx, qInsertLedgerOutcome, start.Run.Repo, start.Run.SourceRunID, start.Run.SourceRunAttempt,
		nullInt64(start.Run.MergeRunID), nullInt(start.Run.MergeRunAttempt), start.Target, start.StartedAt.UTC(),
		sum.FinishedAt.UTC(), sum.Details.DurationMS, cause, enc, []byte(artifacts), start.ToolVersion, string(status)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record %s ingest of run %d: %w", status, start.Run.SourceRunID, err)
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
