package export

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// rowsSource serves fixed rows as a run's samples.
type rowsSource []telemetry.ExportRow

func (s rowsSource) ExportTelemetry(_ context.Context, _ int64, _ int, each func(*telemetry.ExportRow) error) (int, error) {
	for i := range s {
		if err := each(&s[i]); err != nil {
			return 0, err
		}
	}
	return 3, nil
}

// randomRows are samples of a few series with runs of repeated names,
// hosts present and absent, and metrics null at random, including
// NaN-free extremes of float32.
func randomRows(r *rand.Rand, n int) rowsSource {
	out := make(rowsSource, 0, n)
	extremes := []float32{0, -0.5, math.MaxFloat32, math.SmallestNonzeroFloat32, -math.MaxFloat32, 1e-30}
	for len(out) < n {
		series := r.Int64N(1 << 40)
		art := fmt.Sprintf("gpu_metrics_%d", r.IntN(5))
		file := []string{"gpu_metrics.csv", "samples.csv", "ünïcode/😀.csv"}[r.IntN(3)]
		host := ""
		if r.IntN(3) > 0 {
			host = fmt.Sprintf("node-%d", r.IntN(4))
		}
		for k := r.IntN(40) + 1; k > 0 && len(out) < n; k-- {
			row := telemetry.ExportRow{SeriesID: series, Artifact: art, File: file, Host: host,
				GPU: int16(r.IntN(8)), SampledAt: r.Int64N(1<<52) - 1<<51}
			for i := range row.Metrics {
				if r.IntN(4) == 0 {
					continue
				}
				row.Valid[i] = true
				if r.IntN(10) == 0 {
					row.Metrics[i] = extremes[r.IntN(len(extremes))]
				} else {
					row.Metrics[i] = r.Float32() * 1000
				}
			}
			out = append(out, row)
		}
	}
	return out
}

// Every value, null and name written comes back through arrow-go's
// reader, across row groups of every size, with the Arrow types restored.
func TestParquetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ rows, group int }{{0, 5}, {1, 5}, {7, 7}, {100, 7}, {1000, 128}, {5000, 5000}} {
		t.Run(fmt.Sprintf("%d rows in groups of %d", tc.rows, tc.group), func(t *testing.T) {
			rows := randomRows(r, tc.rows)
			var buf bytes.Buffer
			res, err := telemetryParquet(context.Background(), rows, 1, 0, &buf, tc.group)
			require.NoError(t, err)
			require.Equal(t, Result{Attempt: 3, Rows: int64(tc.rows)}, res)

			pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			require.Equal(t, (tc.rows+tc.group-1)/tc.group, pf.NumRowGroups())
			require.EqualValues(t, tc.rows, pf.NumRows())
			require.NoError(t, pf.Close())

			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(buf.Bytes()), parquet.NewReaderProperties(mem),
				pqarrow.ArrowReadProperties{}, mem)
			require.NoError(t, err)
			defer tbl.Release()
			require.Equal(t, TelemetrySchema.NumFields(), tbl.Schema().NumFields())
			for i, want := range TelemetrySchema.Fields() {
				got := tbl.Schema().Field(i) // the reader adds field ids as metadata
				require.Equal(t, want.Name, got.Name)
				require.True(t, arrow.TypeEqual(want.Type, got.Type), "%s: %s", want.Name, got.Type)
				require.Equal(t, want.Nullable, got.Nullable, want.Name)
			}
			require.EqualValues(t, tc.rows, tbl.NumRows())
			got := readRows(t, tbl)
			require.Equal(t, len(rows), len(got))
			for i := range rows {
				require.Equal(t, rows[i], got[i], "row %d", i)
			}
		})
	}
}

// readRows turns a table of TelemetrySchema back into rows.
func readRows(t *testing.T, tbl arrow.Table) []telemetry.ExportRow {
	t.Helper()
	n := int(tbl.NumRows())
	out := make([]telemetry.ExportRow, n)
	each := func(col int, f func(i int, a arrow.Array, j int)) {
		i := 0
		for _, chunk := range tbl.Column(col).Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				f(i, chunk, j)
				i++
			}
		}
		require.Equal(t, n, i)
	}
	name := func(a arrow.Array, j int) string {
		d := a.(*array.Dictionary)
		if d.IsNull(j) {
			return ""
		}
		return d.Dictionary().(*array.String).Value(d.GetValueIndex(j))
	}
	each(0, func(i int, a arrow.Array, j int) { out[i].SeriesID = a.(*array.Int64).Value(j) })
	each(1, func(i int, a arrow.Array, j int) { out[i].Artifact = name(a, j) })
	each(2, func(i int, a arrow.Array, j int) { out[i].File = name(a, j) })
	each(3, func(i int, a arrow.Array, j int) { out[i].Host = name(a, j) })
	each(4, func(i int, a arrow.Array, j int) { out[i].GPU = a.(*array.Int16).Value(j) })
	each(5, func(i int, a arrow.Array, j int) { out[i].SampledAt = int64(a.(*array.Timestamp).Value(j)) })
	for m := range telemetry.NumMetrics {
		each(6+m, func(i int, a arrow.Array, j int) {
			f := a.(*array.Float32)
			if f.IsValid(j) {
				out[i].Valid[m] = true
				out[i].Metrics[m] = f.Value(j)
			}
		})
	}
	return out
}
