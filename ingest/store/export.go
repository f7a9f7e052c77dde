package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// ErrNoTelemetry: the run (attempt) has no stored telemetry.
var ErrNoTelemetry = errors.New("no telemetry stored for this run")

// ExportTelemetry streams the stored samples of a run — the given attempt,
// or with attempt 0 the newest attempt that has series — to each, in key
// order (series, GPU, time), from one query whose rows pgx reads as they
// arrive. The row passed to each is reused: copy what you keep. It returns
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
	for rows.Next() {
		var id int64
		var m meta
		if err := rows.Scan(&id, &m.artifact, &m.file, &m.host); err != nil {
			rows.Close()
			return att, fmt.Errorf("export telemetry: series: %w", err)
		}
		series[id] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return att, fmt.Errorf("export telemetry: series: %w", err)
	}
	rows, err = tx.Query(ctx, qExportSamples, runID, att)
	if err != nil {
		return att, fmt.Errorf("export telemetry: samples: %w", err)
	}
	defer rows.Close()
	isBinary := true
	for _, fd := range rows.FieldDescriptions() {
		isBinary = isBinary && fd.Format == pgx.BinaryFormatCode
	}
	var (
		row     telemetry.ExportRow
		at      time.Time
		metrics [telemetry.NumMetrics]pgtype.Float4
		dest          = []any{&row.SeriesID, &row.GPU, &at}
		last    int64 = -1
	)
	for i := range metrics {
		dest = append(dest, &metrics[i])
	}
	for rows.Next() {
		if isBinary {
			// Decode the binary wire values in place: no per-row allocation.
			if err := decodeSampleRow(rows.RawValues(), &row); err != nil {
				return att, fmt.Errorf("export telemetry: samples: %w", err)
			}
		} else {
			if err := rows.Scan(dest...); err != nil {
				return att, fmt.Errorf("export telemetry: samples: %w", err)
			}
			row.SampledAt = at.UnixMicro()
			for i, m := range metrics {
				row.Metrics[i], row.Valid[i] = m.Float32, m.Valid
			}
		}
		if row.SeriesID != last {
			m := series[row.SeriesID]
			row.Artifact, row.File, row.Host = m.artifact, m.file, m.host
			last = row.SeriesID
		}
		if err := each(&row); err != nil {
			return att, err
		}
	}
	if err := rows.Err(); err != nil {
		return att, fmt.Errorf("export telemetry: samples: %w", err)
	}
	return att, nil
}

// decodeSampleRow reads one qExportSamples row in PostgreSQL's binary
// format: int8 series, int2 GPU, timestamptz (µs since 2000-01-01) and
// float4 metrics (NULL is a nil value).
func decodeSampleRow(vals [][]byte, row *telemetry.ExportRow) error {
	if len(vals) != 3+telemetry.NumMetrics || len(vals[0]) != 8 || len(vals[1]) != 2 || len(vals[2]) != 8 {
		return errors.New("unexpected binary row layout")
	}
	row.SeriesID = int64(binary.BigEndian.Uint64(vals[0]))
	row.GPU = int16(binary.BigEndian.Uint16(vals[1]))
	row.SampledAt = int64(binary.BigEndian.Uint64(vals[2])) + pgEpochMicros
	for i := range telemetry.NumMetrics {
		v := vals[3+i]
		switch len(v) {
		case 0:
			if v != nil {
				return errors.New("empty float4 value")
			}
			row.Valid[i] = false
		case 4:
			row.Metrics[i], row.Valid[i] = math.Float32frombits(binary.BigEndian.Uint32(v)), true
		default:
			return fmt.Errorf("float4 value of %d bytes", len(v))
		}
	}
	return nil
}
