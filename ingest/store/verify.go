package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// StoredDocuments re-encodes the JSON documents a benchmark row stores as
// the normalizer wrote them (benchmark.StoredDocuments), so the row's
// content digest can be recomputed.
type StoredDocuments interface {
	Workers(stored []byte) ([]byte, error)
	PowerInvalidReasons(stored []byte) ([]byte, error)
	PowerAudit(stored []byte) ([]byte, error)
}

// maxNamed bounds the rows a read-back names.
const maxNamed = 10

// verifiedTables are the tables whose rows name their run, ingest and
// source artifact, and whose count an ingest reports.
var verifiedTables = []string{"benchmark_results", "eval_results", "run_stats"}

// ReadBackRun reads back what the database holds of one run for `ingest
// verify`: the ledger's finished ingests of it, its rows and their
// provenance, and the run's rows latest_benchmarks serves now and once
// every curve is recomputed by the rules — in a transaction that is always
// rolled back, so nothing changes (the recompute locks the curves while
// it runs).
//
// It recomputes the content digest of every benchmark row whose stored
// values are what the digest hashed, re-encoding its documents with docs,
// and counts every eval row's samples against the lines its ingest
// recorded.
func (s *Store) ReadBackRun(ctx context.Context, repo string, runID int64, docs StoredDocuments) (schema.RunReadBack, error) {
	rb := schema.RunReadBack{Stored: map[string]int64{}, Adopted: map[string]int64{}, ForeignIngest: map[string]int64{},
		UnrecordedArtifact: map[string]int64{}}
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
		if err := sum.CheckReadable(); err != nil {
			return rb, fmt.Errorf("ingest %d of run %d: %w", sum.IngestID, runID, err)
		}
		rb.Ingests = append(rb.Ingests, sum)
		if sum.Details.OverrideRowsDeleted > 0 || sum.Details.OverrideRowsRewritten > 0 || sum.Details.PurgedRun {
			rb.OverridesTouched = true
		}
	}
	if err := tx.QueryRow(ctx, qVerifyAdopted, repo, runID).Scan(&rb.AdoptedRun); err != nil {
		return rb, s.opts.explain("read the run's adopt", err)
	}
	for _, table := range verifiedTables {
		var n, foreign, unrecorded, adopted int64
		q := fmt.Sprintf(qVerifyTable, pgx.Identifier{table}.Sanitize())
		if err := tx.QueryRow(ctx, q, repo, runID).Scan(&n, &foreign, &unrecorded, &adopted); err != nil {
			return rb, s.opts.explain("count the run's rows in "+table, err)
		}
		rb.Stored[table], rb.ForeignIngest[table], rb.UnrecordedArtifact[table] = n, foreign, unrecorded
		rb.Adopted[table] = adopted
	}
	if rb.Content, err = s.readBackContent(ctx, tx, repo, runID, docs); err != nil {
		return rb, err
	}
	if rb.Samples, err = s.readBackSamples(ctx, tx, repo, runID); err != nil {
		return rb, err
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

// readBackContent recomputes the content digest of the run's benchmark
// rows from their stored key and values (see qVerifyContent).
func (s *Store) readBackContent(ctx context.Context, tx pgx.Tx, repo string, runID int64, docs StoredDocuments) (schema.ContentReadBack, error) {
	var out schema.ContentReadBack
	if err := tx.QueryRow(ctx, qVerifyContentDerived, repo, runID).Scan(&out.Derived); err != nil {
		return out, s.opts.explain("count the run's derived benchmark rows", err)
	}
	rows, err := tx.Query(ctx, qVerifyContent, repo, runID)
	if err != nil {
		return out, s.opts.explain("read the run's benchmark rows", err)
	}
	defer rows.Close()
	var (
		p                                schema.BenchmarkPoint
		date                             string
		metrics, workers, reasons, audit []byte
		stored                           []byte
		enc                              metricsEncoder
	)
	c := &p.Config
	for rows.Next() {
		p = schema.BenchmarkPoint{}
		workers, reasons, audit = nil, nil, nil
		if err := rows.Scan(append(c.KeyFields(), &p.BenchmarkType, &p.ISL, &p.OSL, &p.Conc, &p.OffloadMode, &p.RecipeFingerprint, &date,
			&p.Image, &metrics, &workers, &reasons, &audit, &stored, &p.KVTransferLib)...); err != nil {
			return out, s.opts.explain("read the run's benchmark rows", err)
		}
		out.Checked++
		d, why := recomputeDigest(&p, date, metrics, workers, reasons, audit, docs, &enc)
		if why == "" && bytes.Equal(d[:], stored) {
			continue
		}
		out.Mismatched++
		if len(out.Mismatches) < maxNamed {
			name := pointTarget(&p)
			if why != "" {
				name += " (" + why + ")"
			}
			out.Mismatches = append(out.Mismatches, name)
		}
	}
	if err := rows.Err(); err != nil {
		return out, s.opts.explain("read the run's benchmark rows", err)
	}
	return out, nil
}

// recomputeDigest is the content digest of a stored row (stagingValues),
// or why its values cannot be what the ingest wrote.
func recomputeDigest(p *schema.BenchmarkPoint, date string, metrics, workers, reasons, audit []byte, docs StoredDocuments,
	enc *metricsEncoder) (digest, string) {
	var m map[string]any
	if err := json.Unmarshal(metrics, &m); err != nil {
		return digest{}, "metrics: " + err.Error()
	}
	encoded, err := enc.encode(nil, m)
	if err != nil {
		return digest{}, "metrics: " + err.Error()
	}
	var docErr string
	reencode := func(name string, f func([]byte) ([]byte, error), stored []byte) []byte {
		b, err := f(stored)
		if err != nil && docErr == "" {
			docErr = name + ": " + err.Error()
		}
		return b
	}
	workers = reencode("workers", docs.Workers, workers)
	reasons = reencode("power_invalid_reasons", docs.PowerInvalidReasons, reasons)
	audit = reencode("power_audit", docs.PowerAudit, audit)
	if docErr != "" {
		return digest{}, docErr
	}
	keyHash := sha256.Sum256([]byte(p.Key()))
	return contentDigest(keyHash[:], date, p.Image, p.KVTransferLib, encoded, workers, reasons, audit), ""
}

// readBackSamples counts the samples of the run's eval rows against the
// lines their ingest recorded (see qVerifySamples).
func (s *Store) readBackSamples(ctx context.Context, tx pgx.Tx, repo string, runID int64) (schema.SamplesReadBack, error) {
	var out schema.SamplesReadBack
	rows, err := tx.Query(ctx, qVerifySamples, repo, runID)
	if err != nil {
		return out, s.opts.explain("count the run's eval samples", err)
	}
	var model, precision, hardware, framework, task string
	var conc *int
	var held, recorded int64
	if _, err := pgx.ForEachRow(rows, []any{&model, &precision, &hardware, &framework, &task, &conc, &held, &recorded}, func() error {
		out.Checked++
		out.Samples += recorded
		if held == recorded {
			return nil
		}
		out.Mismatched++
		if len(out.Mismatches) < maxNamed {
			at := "-"
			if conc != nil {
				at = fmt.Sprint(*conc)
			}
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("%s %s %s %s %s conc %s: %d samples stored, %d recorded",
				model, precision, hardware, framework, task, at, held, recorded))
		}
		return nil
	}); err != nil {
		return out, s.opts.explain("count the run's eval samples", err)
	}
	return out, nil
}
