// Package export writes stored data out for analysts: a run's GPU-metric
// samples as a Parquet file, readable by pandas, Polars, DuckDB and
// arrow-go's own reader.
//
// The Parquet container is written here (pqfile.go), on arrow-go's Parquet
// types and the Thrift compact protocol, not with arrow-go's writer: that
// writer (parquet/file, and pqarrow on top of it) links arrow/compute and
// arrow/flight with gRPC, about 40 MB of a binary that otherwise weighs
// under 30. The file carries the Arrow schema under "ARROW:schema", as
// arrow-go's writer does, so Arrow readers get the dictionary and
// timestamp types back exactly. Tests read every file back with pqarrow.
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
	bw := bufio.NewWriterSize(w, 1<<20)
	pw, err := newPQWriter(ctx, bw, telemetryColumns(), [][2]string{{"ARROW:schema", arrowSchema}})
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
	if err == nil {
		err = pw.close()
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return res, fmt.Errorf("write parquet: %w", err)
	}
	return res, nil
}

// telemetryColumns is TelemetrySchema in Parquet's terms, as Arrow's own
// writer maps it: int16 is INT32 annotated Int(16), names are UTF8 byte
// arrays, timestamps INT64 microseconds adjusted to UTC; nullable fields
// are optional.
func telemetryColumns() []pqColumn {
	ct := schema.ConvertedTypes
	name := func(n string, optional bool) pqColumn {
		return pqColumn{name: n, typ: parquet.Types.ByteArray, optional: optional, converted: ct.UTF8, logical: logicalString, dict: true}
	}
	cols := []pqColumn{
		{name: "series_id", typ: parquet.Types.Int64, converted: ct.Int64, logical: logicalInt(64)},
		name("artifact_name", false),
		name("file_name", false),
		name("hostname", true),
		{name: "gpu_index", typ: parquet.Types.Int32, converted: ct.Int16, logical: logicalInt(16)},
		{name: "sampled_at", typ: parquet.Types.Int64, converted: ct.TimestampMicros, logical: logicalTimestampMicrosUTC},
	}
	for _, n := range telemetry.MetricNames {
		cols = append(cols, pqColumn{name: n, typ: parquet.Types.Float, optional: true, converted: ct.None})
	}
	return cols
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
