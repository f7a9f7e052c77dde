// Package export writes stored data out for analysts: a run's GPU-metric
// samples as a Parquet file (arrow-go pqarrow), readable by pandas, Polars
// and DuckDB.
package export

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// TelemetrySource streams a run's stored samples (the store implements it).
type TelemetrySource interface {
	ExportTelemetry(ctx context.Context, runID int64, attempt int, each func(*telemetry.ExportRow) error) (int, error)
}

// BatchRows is the number of samples per record batch and Parquet row group.
const BatchRows = 128 * 1024

// TelemetrySchema is the Parquet file's layout: one row per sample.
var TelemetrySchema = newTelemetrySchema()

func newTelemetrySchema() *arrow.Schema {
	// Names repeat for every sample of a series: dictionary-encoded, a
	// batch holds each once.
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	fields := []arrow.Field{
		{Name: "series_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "artifact_name", Type: dict},
		{Name: "file_name", Type: dict},
		{Name: "hostname", Type: dict, Nullable: true},
		{Name: "gpu_index", Type: arrow.PrimitiveTypes.Int16},
		{Name: "sampled_at", Type: telemetry.TimestampType},
	}
	for _, n := range telemetry.MetricNames {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Result says what an export wrote.
type Result struct {
	Attempt int
	Rows    int64
}

// TelemetryParquet writes the samples of run runID (attempt, or the newest
// with telemetry when 0) to w as Parquet (snappy), streaming: rows are
// gathered into record batches of BatchRows, each written as a row group
// and released, so memory stays flat however many samples the run holds.
func TelemetryParquet(ctx context.Context, src TelemetrySource, runID int64, attempt int, w io.Writer, mem memory.Allocator) (Result, error) {
	var res Result
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithAllocator(mem),
		parquet.WithDictionaryDefault(true))
	// The writer is the caller's: pqarrow closes an io.Closer it is given.
	bw := bufio.NewWriterSize(w, 1<<20)
	fw, err := pqarrow.NewFileWriter(TelemetrySchema, struct{ io.Writer }{bw}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema()))
	if err != nil {
		return res, fmt.Errorf("parquet writer: %w", err)
	}
	bld := array.NewRecordBuilder(mem, TelemetrySchema)
	defer bld.Release()
	var (
		id      = bld.Field(0).(*array.Int64Builder)
		art     = bld.Field(1).(*array.BinaryDictionaryBuilder)
		file    = bld.Field(2).(*array.BinaryDictionaryBuilder)
		host    = bld.Field(3).(*array.BinaryDictionaryBuilder)
		gpu     = bld.Field(4).(*array.Int16Builder)
		ts      = bld.Field(5).(*array.TimestampBuilder)
		mb      [telemetry.NumMetrics]*array.Float32Builder
		inBatch int
	)
	for i := range mb {
		mb[i] = bld.Field(6 + i).(*array.Float32Builder)
	}
	flush := func() error {
		if inBatch == 0 {
			return nil
		}
		rec := bld.NewRecordBatch()
		defer rec.Release()
		inBatch = 0
		if err := fw.Write(rec); err != nil {
			return fmt.Errorf("write parquet: %w", err)
		}
		return nil
	}
	res.Attempt, err = src.ExportTelemetry(ctx, runID, attempt, func(r *telemetry.ExportRow) error {
		id.Append(r.SeriesID)
		art.AppendString(r.Artifact)
		file.AppendString(r.File)
		if r.Host == "" {
			host.AppendNull()
		} else {
			host.AppendString(r.Host)
		}
		gpu.Append(r.GPU)
		ts.Append(arrow.Timestamp(r.SampledAt))
		for i, b := range mb {
			if r.Valid[i] {
				b.Append(r.Metrics[i])
			} else {
				b.AppendNull()
			}
		}
		res.Rows++
		if inBatch++; inBatch == BatchRows {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if cerr := fw.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close parquet: %w", cerr)
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write parquet: %w", ferr)
	}
	return res, err
}
