package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// PriorIngest reads the newest finished ingest of a run: its input digest,
// whether any other transaction has written data since it finished, and
// its summary (none when this build does not read its schemaVersion). A
// run never ingested gives the zero PriorIngest.
func (s *Store) PriorIngest(ctx context.Context, run schema.RunIdentity) (schema.PriorIngest, error) {
	var (
		p   schema.PriorIngest
		raw []byte
	)
	if ok, err := s.recordsInputs(ctx); err != nil || !ok {
		return p, err
	}
	err := s.pool.QueryRow(ctx, qPriorIngest, run.Repo, run.SourceRunID, run.SourceRunAttempt).
		Scan(&p.IngestID, &p.InputDigest, &p.DataUnchanged, &raw, &p.InputFiles)
	if errors.Is(err, pgx.ErrNoRows) {
		return schema.PriorIngest{}, nil
	}
	if err != nil {
		return p, s.opts.explain(fmt.Sprintf("read the prior ingest of run %d attempt %d", run.SourceRunID, run.SourceRunAttempt), err)
	}
	if len(raw) > 0 {
		var sum schema.Summary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return p, fmt.Errorf("decode the summary of ingest %d: %w", p.IngestID, err)
		}
		// A summary of a layout this build does not read is no answer to
		// a rerun: without it the rerun reads the run in full.
		if err := sum.CheckReadable(); err != nil {
			s.log.Info("the prior ingest's summary is not read: a rerun reads the run in full",
				zap.Int64("ingest_id", p.IngestID), zap.Error(err))
			return p, nil
		}
		p.Summary = &sum
	}
	return p, nil
}

// RecordUnchanged records a rerun answered from the prior ingest p, whose
// inputs had digest (files: the file index of this rerun's digest): under the run's advisory lock it writes one finished
// ledger row (sum, with its ingest id set) that carries p's artifact
// records and data stamps, and commits — or, for a dry run, rolls back. It
// returns false, having written nothing, when p is no longer the run's
// newest finished ingest or the data changed since; the caller then
// ingests the run in full. beforeCommit, when set, is called once the lock
// is held; its error aborts.
func (s *Store) RecordUnchanged(ctx context.Context, start schema.RunStart, p schema.PriorIngest, digest, files []byte,
	sum *schema.Summary, dryRun bool, beforeCommit func(context.Context) error) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin run transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	t := &RunTx{tx: tx, start: start, opts: s.opts,
		log: s.log.With(zap.Int64("run_id", start.Run.SourceRunID), zap.Int("attempt", start.Run.SourceRunAttempt))}
	if err := t.lockRun(ctx); err != nil {
		return false, err
	}
	if beforeCommit != nil {
		if err := beforeCommit(ctx); err != nil {
			return false, err
		}
	}
	// The row's id is taken first, so that the summary is written as
	// encoded here, with its id, rather than edited by the server (a
	// summary with 500 evals' evidence is 150 KB of JSON to parse). An id
	// not used (the prior ingest was superseded) is a gap in the sequence.
	var id int64
	if err := tx.QueryRow(ctx, qNextIngestID).Scan(&id); err != nil {
		return false, t.explain("take a ledger id", err)
	}
	withID := *sum
	withID.IngestID = id
	enc, err := json.Marshal(&withID)
	if err != nil {
		return false, fmt.Errorf("encode summary: %w", err)
	}
	// An index the prior ingest's resolves to already is not stored again
	// (430 KB for a 5000-point run, a third of the row's writing).
	if bytes.Equal(files, p.InputFiles) {
		files = nil
	}
	r := start.Run
	err = tx.QueryRow(ctx, qRecordUnchanged, r.Repo, r.SourceRunID, r.SourceRunAttempt,
		nullInt64(r.MergeRunID), nullInt(r.MergeRunAttempt), string(sum.Status), start.Target,
		sum.StartedAt.UTC(), sum.FinishedAt.UTC(), sum.Details.DurationMS, string(enc), start.ToolVersion,
		digest, p.IngestID, files, id).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, t.explain("record the unchanged rerun in the ledger", err)
	}
	if dryRun {
		return true, nil // the deferred rollback discards the row
	}
	if err := tx.Commit(ctx); err != nil {
		return false, t.explain("commit run", err)
	}
	sum.IngestID = id
	return true, nil
}

// recordsInputs says whether the schema has the ledger columns and the
// change notes of unchanged reruns (migration 10). A database used with
// --no-migrate may predate them: its ingests record no digest and every
// rerun reads in full.
func (s *Store) recordsInputs(ctx context.Context) (bool, error) {
	switch s.unchanged.Load() {
	case 1:
		return true, nil
	case 2:
		return false, nil
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, qHasDataChanges).Scan(&ok); err != nil {
		return false, s.opts.explain("look for the data_changes table", err)
	}
	known := int32(2)
	if ok {
		known = 1
	}
	s.unchanged.Store(known)
	return ok, nil
}

// hasKVTransferLib says whether benchmark_results has kv_transfer_lib
// (migration 26). A database used with --no-migrate may predate it: its
// rows are written without the library.
func (s *Store) hasKVTransferLib(ctx context.Context) (bool, error) {
	switch s.kvLib.Load() {
	case 1:
		return true, nil
	case 2:
		return false, nil
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, qHasKVTransferLib).Scan(&ok); err != nil {
		return false, s.opts.explain("look for benchmark_results.kv_transfer_lib", err)
	}
	known := int32(2)
	if ok {
		known = 1
	}
	s.kvLib.Store(known)
	return ok, nil
}

// hasDatasets says whether the schema has the dashboard's datasets table
// (migration 17). A database used with --no-migrate may predate it: its
// runs record their dataset slug but no catalogue row.
func (s *Store) hasDatasets(ctx context.Context) (bool, error) {
	switch s.datasets.Load() {
	case 1:
		return true, nil
	case 2:
		return false, nil
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, qHasDatasets).Scan(&ok); err != nil {
		return false, s.opts.explain("look for the datasets table", err)
	}
	known := int32(2)
	if ok {
		known = 1
	}
	s.datasets.Store(known)
	return ok, nil
}
