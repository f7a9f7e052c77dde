// Package export writes stored data out for analysts: a run's GPU-metric
// samples as a Parquet file, readable by pandas, Polars, DuckDB and
// arrow-go's own reader.
//
// The file is written with arrow-go's low-level Parquet writer
// (parquet/file: a schema of primitive nodes, typed column writers fed
// from column buffers; not pqarrow, so no Arrow record batches): bounded
// row groups, statistics on every column chunk, names, series and GPU
// index dictionary-encoded, snappy pages. parquet/file's encoders import
// arrow/compute (most of the binary's growth with it); flight, gRPC and
// protobuf stay out (cmd/ingest's TestNoHeavyDependencies). The file
// carries the Arrow schema under "ARROW:schema", as pqarrow's writer
// does, so Arrow readers get the dictionary and timestamp types back
// exactly. Tests read every file back with pqarrow and with parquet-go,
// an independent implementation.
package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// TelemetrySource streams a run's stored samples (the store implements it).
type TelemetrySource interface {
	ExportTelemetry(ctx context.Context, runID int64, attempt int, each func(*telemetry.ExportRow) error) (int, error)
}

// BatchRows is the number of samples per Parquet row group.
const BatchRows = 128 * 1024

// TelemetrySchema is the file's layout as Arrow sees it: one row per
// sample. Names repeat for every sample of a series, so they are
// dictionary-encoded.
var TelemetrySchema = newTelemetrySchema()

func newTelemetrySchema() *arrow.Schema {
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
// with telemetry when 0) to w as Parquet (snappy; names dictionary-encoded),
// streaming: rows are gathered into column buffers of BatchRows, each
// written as a row group and reused, so memory stays flat however many
// samples the run holds.
func TelemetryParquet(ctx context.Context, src TelemetrySource, runID int64, attempt int, w io.Writer) (Result, error) {
	return telemetryParquet(ctx, src, runID, attempt, w, BatchRows)
}

func telemetryParquet(ctx context.Context, src TelemetrySource, runID int64, attempt int, w io.Writer, groupRows int) (Result, error) {
	var res Result
	arrowSchema, err := serializedSchema()
	if err != nil {
		return res, err
	}
	sc, err := telemetryParquetSchema()
	if err != nil {
		return res, fmt.Errorf("parquet schema: %w", err)
	}
	meta := metadata.NewKeyValueMetadata()
	if err := meta.Append("ARROW:schema", arrowSchema); err != nil {
		return res, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	pw, err := file.NewParquetWriterWithError(bw, sc, file.WithWriterProps(writerProperties(groupRows)), file.WithWriteMetadata(meta))
	if err != nil {
		return res, fmt.Errorf("write parquet: %w", err)
	}
	var cols columns
	res.Attempt, err = src.ExportTelemetry(ctx, runID, attempt, func(r *telemetry.ExportRow) error {
		cols.add(r)
		res.Rows++
		if cols.rows == groupRows {
			return cols.flush(pw)
		}
		return nil
	})
	if err == nil {
		err = cols.flush(pw)
	}
	if cerr := pw.Close(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return res, fmt.Errorf("write parquet: %w", err)
	}
	return res, nil
}

// writerProperties: snappy pages, statistics on every column, row groups
// of at most groupRows, dictionaries for the repeating columns (names,
// series, GPU index) and none for timestamps and metric values, which
// rarely repeat.
func writerProperties(groupRows int) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(int64(groupRows)),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy("ingest (arrow-go parquet)"),
	}
	for _, n := range []string{"series_id", "artifact_name", "file_name", "hostname", "gpu_index"} {
		opts = append(opts, parquet.WithDictionaryFor(n, true))
	}
	return parquet.NewWriterProperties(opts...)
}

// telemetryParquetSchema is TelemetrySchema in Parquet's terms, as Arrow's
// own writer maps it: int16 is INT32 annotated Int(16), names are UTF8
// byte arrays, timestamps INT64 microseconds adjusted to UTC; nullable
// fields are optional.
func telemetryParquetSchema() (*schema.GroupNode, error) {
	req, opt := parquet.Repetitions.Required, parquet.Repetitions.Optional
	type field struct {
		name    string
		rep     parquet.Repetition
		logical schema.LogicalType
		typ     parquet.Type
	}
	fields := []field{
		{"series_id", req, schema.NewIntLogicalType(64, true), parquet.Types.Int64},
		{"artifact_name", req, schema.StringLogicalType{}, parquet.Types.ByteArray},
		{"file_name", req, schema.StringLogicalType{}, parquet.Types.ByteArray},
		{"hostname", opt, schema.StringLogicalType{}, parquet.Types.ByteArray},
		{"gpu_index", req, schema.NewIntLogicalType(16, true), parquet.Types.Int32},
		{"sampled_at", req, schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64},
	}
	for _, n := range telemetry.MetricNames {
		fields = append(fields, field{n, opt, schema.NoLogicalType{}, parquet.Types.Float})
	}
	nodes := make(schema.FieldList, 0, len(fields))
	for _, f := range fields {
		n, err := schema.NewPrimitiveNodeLogical(f.name, f.rep, f.logical, f.typ, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.name, err)
		}
		nodes = append(nodes, n)
	}
	return schema.NewGroupNode("schema", req, nodes, -1)
}

// serializedSchema is TelemetrySchema as an Arrow IPC schema message,
// base64-encoded: the form Arrow's Parquet reader looks for under
// "ARROW:schema" to restore the Arrow types.
func serializedSchema() (string, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(TelemetrySchema))
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("arrow schema: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
