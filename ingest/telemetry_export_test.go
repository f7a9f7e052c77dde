package ingest_test

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/export"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

func TestTelemetryExportParquetRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	want := telemetryTree(t, dir)
	cfg := ingest.Config{Run: RunID(777, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}}
	e.mustIngest(dir, cfg)

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	res, err := export.TelemetryParquet(context.Background(), e.st, 777, 0, &buf)
	require.NoError(t, err)
	require.Equal(t, export.Result{Attempt: 1, Rows: want}, res)

	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(buf.Bytes()), parquet.NewReaderProperties(mem),
		pqarrow.ArrowReadProperties{}, mem)
	require.NoError(t, err)
	defer tbl.Release()
	require.EqualValues(t, want, tbl.NumRows())
	require.Equal(t, export.TelemetrySchema.NumFields(), tbl.Schema().NumFields())
	for i, f := range export.TelemetrySchema.Fields() {
		got := tbl.Schema().Field(i)
		require.Equal(t, f.Name, got.Name)
		require.True(t, arrow.TypeEqual(f.Type, got.Type), "%s: %s", f.Name, got.Type)
	}

	// Every value comes back: sums and null counts per column match the database.
	var dbPower, dbTemp float64
	var dbTempNulls int64
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT sum(power_w::float8), sum(temperature_c::float8), count(*) FILTER (WHERE temperature_c IS NULL) FROM gpu_metric_samples`).
		Scan(&dbPower, &dbTemp, &dbTempNulls))
	sum := func(col int) (float64, int64) {
		var s float64
		var nulls int64
		for _, chunk := range tbl.Column(col).Data().Chunks() {
			a := chunk.(*array.Float32)
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) {
					nulls++
					continue
				}
				s += float64(a.Value(i))
			}
		}
		return s, nulls
	}
	power, powerNulls := sum(6)
	temp, tempNulls := sum(7)
	require.Zero(t, powerNulls)
	require.InDelta(t, dbPower, power, math.Abs(dbPower)*1e-12)
	require.InDelta(t, dbTemp, temp, math.Abs(dbTemp)*1e-12)
	require.Equal(t, dbTempNulls, tempNulls)

	// Names come back from their dictionaries.
	names := map[string]int64{}
	for _, chunk := range tbl.Column(1).Data().Chunks() {
		d := chunk.(*array.Dictionary)
		values := d.Dictionary().(*array.String)
		for i := 0; i < d.Len(); i++ {
			names[values.Value(d.GetValueIndex(i))]++
		}
	}
	require.Equal(t, map[string]int64{"gpu_metrics_s1": 88, "gpu_metrics_s2": 88, "power_audit_s4": 6, "agentic_s5": 22,
		"gpu_metrics_s7": 4}, names)

	// A run without telemetry is an error, not an empty file.
	_, err = export.TelemetryParquet(context.Background(), e.st, 999, 0, &bytes.Buffer{})
	require.ErrorIs(t, err, store.ErrNoTelemetry)
}
