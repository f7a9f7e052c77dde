package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// TelemetryState reads, in one round trip, the series the run already has
// and its benchmark rows with their published power.
//
// A row an adopt took over (source_artifact 'adopted') names no artifact,
// yet the telemetry stage finds a point's files by its benchmark artifact.
// When this ingest staged a copy of the row (the copy took the adopted
// row's digest, stagingValues), the point is given the artifact and file
// of the winning copy: the rerun of an adopted run then reads the
// telemetry of the points it kept, and keeps the adopted series.
func (t *RunTx) TelemetryState(ctx context.Context) (telemetry.RunState, error) {
	var st telemetry.RunState
	readFrom := t.winners.sources()
	b := &pgx.Batch{}
	b.Queue(qTelemetryStoredSeries, t.run.WorkflowRunID)
	b.Queue(qTelemetryRunPoints, t.run.WorkflowRunID)
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return st, t.explain("read stored series", err)
	}
	for rows.Next() {
		var s telemetry.StoredSeries
		var vendor string
		var gpus int16
		var energy, avg, avgTotal *float64
		if err := rows.Scan(&s.ID, &s.Artifact, &s.File, &s.Digest, &vendor, &gpus, &s.Facts.WindowSource,
			&energy, &avg, &avgTotal, &s.Samples, &s.CSVSha256); err != nil {
			rows.Close()
			return st, t.explain("read stored series", err)
		}
		s.Vendor, s.Facts.GPUs = telemetry.Vendor(vendor), int(gpus)
		s.Adopted = s.Facts.WindowSource == telemetry.WindowAdopted
		if energy != nil && avg != nil && avgTotal != nil {
			s.Facts.EnergyJ, s.Facts.AvgPowerW, s.Facts.AvgTotalPowerW, s.Facts.HasPower = *energy, *avg, *avgTotal, true
		}
		st.Series = append(st.Series, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, t.explain("read stored series", err)
	}
	rows, err = res.Query()
	if err != nil {
		return st, t.explain("read run points", err)
	}
	for rows.Next() {
		var p telemetry.RunPoint
		var d []byte
		if err := rows.Scan(&p.ID, &d, &p.SourceArtifact, &p.SourceFile, &p.BenchmarkType, &p.ISL, &p.OSL, &p.Conc,
			&p.RecipeFingerprint, &p.Hardware, &p.Model, &p.Framework, &p.Precision,
			&p.PowerValid, &p.PowerSchemaVersion, &p.AvgPowerW, &p.AvgTotalGPUPowerW, &p.TotalGPUEnergyJ,
			&p.JoulesPerOutputTok, &p.AuditWindowStart, &p.AuditWindowEnd, &p.AuditSampleCount, &p.AuditObservedGPUs); err != nil {
			rows.Close()
			return st, t.explain("read run points", err)
		}
		if p.SourceArtifact == adoptedSource {
			var k digest
			copy(k[:], d)
			if src, ok := readFrom[k]; ok {
				p.SourceArtifact, p.SourceFile = src.Artifact, src.File
			}
		}
		st.Points = append(st.Points, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, t.explain("read run points", err)
	}
	return st, res.Close()
}

// ReserveSeriesIDs takes n ids for series rows written later in the run;
// ids not used leave gaps, nothing else.
func (t *RunTx) ReserveSeriesIDs(ctx context.Context, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, qReserveSeriesIDs, n)
	if err != nil {
		return nil, t.explain("reserve series ids", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, t.explain("reserve series ids", err)
	}
	return ids, nil
}

// CopySamples streams sample batches into gpu_metric_sample_chunks with
// one binary COPY. next is called until it reports no more batches; each
// batch is encoded straight from its Arrow arrays (a chunk row per run of
// one GPU's consecutive samples in the batch) and released. It returns the number of samples stored.
func (t *RunTx) CopySamples(ctx context.Context, next func() (telemetry.SampleBatch, bool, error)) (int64, error) {
	enc := newSampleEncoder(next)
	defer enc.close()
	tag, err := t.tx.Conn().PgConn().CopyFrom(ctx, enc, sampleCopy)
	if err != nil {
		if enc.err != nil {
			return 0, enc.err
		}
		return 0, t.explain("copy samples", err)
	}
	if tag.RowsAffected() != enc.chunks {
		return 0, fmt.Errorf("copy samples: sent %d chunks, PostgreSQL stored %d", enc.chunks, tag.RowsAffected())
	}
	return enc.rows, nil
}

// WriteSeries deletes the series being replaced, inserts the new series
// rows and links benchmark rows to series, in one round trip.
func (t *RunTx) WriteSeries(ctx context.Context, replace []int64, rows []telemetry.SeriesRow, links []telemetry.Link) (telemetry.WriteResult, error) {
	var r telemetry.WriteResult
	b := &pgx.Batch{}
	if len(replace) > 0 {
		b.Queue(qDeleteSeries, replace)
	}
	if len(rows) > 0 {
		n := len(rows)
		var (
			ids                                                = make([]int64, n)
			artifact, key, file, vendor, format, host, wsource = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			digests                                            = make([][]byte, n)
			samples, dups, dropped                             = make([]int32, n), make([]int32, n), make([]int32, n)
			gpus                                               = make([]int16, n)
			started, ended, ws, we                             = make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
			interval, p50, p90                                 = make([]float32, n), make([]*float32, n), make([]*float32, n)
			energy, avg, avgTotal                              = make([]*float64, n), make([]*float64, n), make([]*float64, n)
			csvSum, sidecars                                   = make([]string, n), make([]string, n)
		)
		for i, s := range rows {
			f := s.Facts
			ids[i], artifact[i], key[i], file[i] = s.ID, s.Artifact, s.ConfigKey, s.File
			vendor[i], format[i], host[i], digests[i] = string(s.Vendor), string(s.Format), s.Host, s.Digest
			samples[i], gpus[i], dups[i], dropped[i] = int32(f.Samples), int16(f.GPUs), int32(f.Duplicates), int32(f.Dropped)
			started[i], ended[i] = time.UnixMicro(f.Start).UTC(), time.UnixMicro(f.End).UTC()
			ws[i], we[i], wsource[i] = time.UnixMicro(f.WindowStart).UTC(), time.UnixMicro(f.WindowEnd).UTC(), f.WindowSource
			interval[i] = float32(f.IntervalS)
			csvSum[i], sidecars[i] = s.CSVSha256, string(s.Sidecars)
			if len(s.Sidecars) == 0 {
				sidecars[i] = "{}"
			}
			if f.HasPower {
				e, a, at := f.EnergyJ, f.AvgPowerW, f.AvgTotalPowerW
				energy[i], avg[i], avgTotal[i] = &e, &a, &at
				q50, q90 := float32(f.P50PowerW), float32(f.P90PowerW)
				p50[i], p90[i] = &q50, &q90
			}
		}
		b.Queue(qInsertSeries, t.run.WorkflowRunID, t.run.IngestID, ids, artifact, key, file, vendor, format, host,
			digests, samples, gpus, started, ended, interval, ws, we, wsource, energy, avg, avgTotal, p50, p90, dups, dropped,
			csvSum, sidecars, telemetry.StatsVersion)
	}
	stats := statsArrays(rows)
	if stats.n > 0 {
		b.Queue(qInsertGPUStats, stats.series, stats.gpu, stats.metric, stats.count, stats.min, stats.max,
			stats.mean, stats.median, stats.p95, stats.p99, stats.stddev)
	}
	if len(links) > 0 {
		br, sr := make([]int64, len(links)), make([]int64, len(links))
		for i, l := range links {
			br[i], sr[i] = l.BenchmarkID, l.SeriesID
		}
		b.Queue(qInsertLinks, br, sr)
	}
	if b.Len() == 0 {
		return r, nil
	}
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if len(replace) > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("delete replaced series", err)
		}
		r.SeriesReplaced = tag.RowsAffected()
	}
	if len(rows) > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("write series", err)
		}
		r.SeriesInserted = tag.RowsAffected()
	}
	if stats.n > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("write series digests", err)
		}
		if tag.RowsAffected() != int64(stats.n) {
			return r, fmt.Errorf("write series digests: sent %d rows, PostgreSQL stored %d", stats.n, tag.RowsAffected())
		}
	}
	if len(links) > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("link series", err)
		}
		r.LinksInserted = tag.RowsAffected()
	}
	return r, res.Close()
}

// gpuStatsArrays are the per-GPU digests of series rows as the parallel
// arrays qInsertGPUStats takes.
type gpuStatsArrays struct {
	n                                        int
	series                                   []int64
	gpu                                      []int16
	metric                                   []string
	count                                    []int32
	min, max, mean, median, p95, p99, stddev []float32
}

func statsArrays(rows []telemetry.SeriesRow) gpuStatsArrays {
	var a gpuStatsArrays
	for _, r := range rows {
		a.n += len(r.Stats)
	}
	if a.n == 0 {
		return a
	}
	a.series, a.gpu, a.metric, a.count = make([]int64, 0, a.n), make([]int16, 0, a.n), make([]string, 0, a.n), make([]int32, 0, a.n)
	f := func() []float32 { return make([]float32, 0, a.n) }
	a.min, a.max, a.mean, a.median, a.p95, a.p99, a.stddev = f(), f(), f(), f(), f(), f(), f()
	for _, r := range rows {
		for _, s := range r.Stats {
			a.series = append(a.series, r.ID)
			a.gpu = append(a.gpu, s.GPU)
			a.metric = append(a.metric, telemetry.MetricNames[s.Metric])
			a.count = append(a.count, int32(s.Count))
			a.min = append(a.min, float32(s.Min))
			a.max = append(a.max, float32(s.Max))
			a.mean = append(a.mean, float32(s.Mean))
			a.median = append(a.median, float32(s.Median))
			a.p95 = append(a.p95, float32(s.P95))
			a.p99 = append(a.p99, float32(s.P99))
			a.stddev = append(a.stddev, float32(s.Stddev))
		}
	}
	return a
}
