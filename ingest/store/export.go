package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// ErrNoTelemetry: the run (attempt) has no stored telemetry.
var ErrNoTelemetry = errors.New("no telemetry stored for this run")

// ExportTelemetry streams the stored samples of a run — the given attempt,
// or with attempt 0 the newest attempt that has series — to each, in key
// order (series, GPU, time), from one query over the sample chunks whose
// rows pgx reads as they arrive; one GPU of one series is held at a time. The row passed to each is reused: copy what you keep. It returns
// the attempt exported.
func (s *Store) ExportTelemetry(ctx context.Context, runID int64, attempt int, each func(*telemetry.ExportRow) error) (int, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return 0, fmt.Errorf("export telemetry: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var att int
	if err := tx.QueryRow(ctx, qExportAttempt, runID, attempt).Scan(&att); err != nil {
		return 0, fmt.Errorf("export telemetry: %w", err)
	}
	if att == 0 {
		return 0, ErrNoTelemetry
	}
	type meta struct{ artifact, file, host string }
	series := map[int64]meta{}
	rows, err := tx.Query(ctx, qExportSeries, runID, att)
	if err != nil {
		return att, fmt.Errorf("export telemetry: series: %w", err)
	}
	var id int64
	var m meta
	if _, err := pgx.ForEachRow(rows, []any{&id, &m.artifact, &m.file, &m.host}, func() error {
		series[id] = m
		return nil
	}); err != nil {
		return att, fmt.Errorf("export telemetry: series: %w", err)
	}
	rows, err = tx.Query(ctx, qExportChunks, runID, att)
	if err != nil {
		return att, fmt.Errorf("export telemetry: samples: %w", err)
	}
	defer rows.Close()
	var (
		g    gpuSamples
		c    sampleChunk
		dest = []any{&c.series, &c.gpu, &c.at}
	)
	for m := range c.metrics {
		dest = append(dest, &c.metrics[m])
	}
	emit := func() error {
		if g.n() == 0 {
			return nil
		}
		m := series[g.series]
		return g.emit(&telemetry.ExportRow{SeriesID: g.series, Artifact: m.artifact, File: m.file, Host: m.host, GPU: g.gpu}, each)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return att, fmt.Errorf("export telemetry: samples: %w", err)
		}
		if c.series != g.series || c.gpu != g.gpu {
			if err := emit(); err != nil {
				return att, err
			}
			g.reset(c.series, c.gpu)
		}
		if err := g.add(&c); err != nil {
			return att, fmt.Errorf("export telemetry: series %d GPU %d: %w", c.series, c.gpu, err)
		}
	}
	if err := rows.Err(); err != nil {
		return att, fmt.Errorf("export telemetry: samples: %w", err)
	}
	return att, emit()
}
