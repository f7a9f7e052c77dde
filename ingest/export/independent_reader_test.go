package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// A second, independent Parquet implementation (parquet-go, which shares
// no code with arrow-go) reads every file back: the same rows, bounded
// row groups, statistics on every column chunk that agree with the rows,
// and dictionary-encoded name columns.
func TestParquetIndependentReader(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ rows, group int }{{1, 5}, {1000, 128}, {5000, 5000}} {
		t.Run(fmt.Sprintf("%d rows in groups of %d", tc.rows, tc.group), func(t *testing.T) {
			rows := randomRows(r, tc.rows)
			var buf bytes.Buffer
			_, err := telemetryParquet(context.Background(), rows, 1, 0, &buf, tc.group)
			require.NoError(t, err)

			f, err := pq.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			require.NoError(t, err)
			require.EqualValues(t, tc.rows, f.NumRows())
			meta := f.Metadata()
			require.Len(t, meta.RowGroups, (tc.rows+tc.group-1)/tc.group)

			leaves := f.Schema().Columns()
			require.Len(t, leaves, TelemetrySchema.NumFields())
			for i, want := range TelemetrySchema.Fields() {
				require.Equal(t, []string{want.Name}, leaves[i], "column %d", i)
			}

			start := 0
			for g, rg := range meta.RowGroups {
				end := min(start+tc.group, tc.rows)
				require.EqualValues(t, end-start, rg.NumRows, "row group %d", g)
				for c, chunk := range rg.Columns {
					checkChunkStats(t, rows[start:end], c, chunk.MetaData)
				}
				start = end
			}
			require.Equal(t, tc.rows, start)

			got := readIndependently(t, f)
			require.Equal(t, len(rows), len(got))
			for i := range rows {
				require.Equal(t, rows[i], got[i], "row %d", i)
			}
		})
	}
}

// checkChunkStats: the chunk's statistics are present and equal the
// minimum, maximum and null count of column c over the group's rows; name
// columns are dictionary-encoded, timestamps and metrics are not.
func checkChunkStats(t *testing.T, rows []telemetry.ExportRow, c int, m format.ColumnMetaData) {
	t.Helper()
	name := m.PathInSchema[0]
	st := m.Statistics
	if c < 3 || c == 4 || c == 5 { // required columns: every chunk has a minimum and a maximum
		require.NotNil(t, st.MinValue, "%s: no min statistic", name)
		require.NotNil(t, st.MaxValue, "%s: no max statistic", name)
	}
	dict := slices.Contains(m.Encoding, format.RLEDictionary)
	switch c {
	case 0:
		lo, hi := minMax(rows, func(r telemetry.ExportRow) (int64, bool) { return r.SeriesID, true })
		require.Equal(t, lo, int64(binary.LittleEndian.Uint64(st.MinValue)), name)
		require.Equal(t, hi, int64(binary.LittleEndian.Uint64(st.MaxValue)), name)
	case 1, 2, 3:
		require.True(t, dict, "%s is not dictionary-encoded: %v", name, m.Encoding)
		get := []func(telemetry.ExportRow) string{
			func(r telemetry.ExportRow) string { return r.Artifact },
			func(r telemetry.ExportRow) string { return r.File },
			func(r telemetry.ExportRow) string { return r.Host },
		}[c-1]
		var vals []string
		nulls := 0
		for _, r := range rows {
			if v := get(r); v != "" || c != 3 {
				vals = append(vals, v)
			} else {
				nulls++
			}
		}
		require.EqualValues(t, nulls, st.NullCount, name)
		if len(vals) > 0 {
			require.NotNil(t, st.MinValue, "%s: no min statistic", name)
			require.Equal(t, slices.Min(vals), string(st.MinValue), name)
			require.Equal(t, slices.Max(vals), string(st.MaxValue), name)
		}
	case 4:
		lo, hi := minMax(rows, func(r telemetry.ExportRow) (int64, bool) { return int64(r.GPU), true })
		require.EqualValues(t, lo, int32(binary.LittleEndian.Uint32(st.MinValue)), name)
		require.EqualValues(t, hi, int32(binary.LittleEndian.Uint32(st.MaxValue)), name)
	case 5:
		require.False(t, dict, "%s should not be dictionary-encoded", name)
		lo, hi := minMax(rows, func(r telemetry.ExportRow) (int64, bool) { return r.SampledAt, true })
		require.Equal(t, lo, int64(binary.LittleEndian.Uint64(st.MinValue)), name)
		require.Equal(t, hi, int64(binary.LittleEndian.Uint64(st.MaxValue)), name)
	default:
		i := c - 6
		require.False(t, dict, "%s should not be dictionary-encoded", name)
		nulls := 0
		var vals []float32
		for _, r := range rows {
			if r.Valid[i] {
				vals = append(vals, r.Metrics[i])
			} else {
				nulls++
			}
		}
		require.EqualValues(t, nulls, st.NullCount, name)
		if len(vals) > 0 {
			require.NotNil(t, st.MinValue, "%s: no min statistic", name)
			require.Equal(t, slices.Min(vals), math.Float32frombits(binary.LittleEndian.Uint32(st.MinValue)), name)
			require.Equal(t, slices.Max(vals), math.Float32frombits(binary.LittleEndian.Uint32(st.MaxValue)), name)
		}
	}
}

func minMax(rows []telemetry.ExportRow, get func(telemetry.ExportRow) (int64, bool)) (int64, int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range rows {
		v, _ := get(r)
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// readIndependently reads every row with parquet-go's row reader.
func readIndependently(t *testing.T, f *pq.File) []telemetry.ExportRow {
	t.Helper()
	rd := pq.NewReader(f)
	defer rd.Close()
	var out []telemetry.ExportRow
	buf := make([]pq.Row, 256)
	for {
		n, err := rd.ReadRows(buf)
		for _, row := range buf[:n] {
			var e telemetry.ExportRow
			for _, v := range row {
				c := v.Column()
				switch {
				case c == 0:
					e.SeriesID = v.Int64()
				case c == 1:
					e.Artifact = string(v.ByteArray())
				case c == 2:
					e.File = string(v.ByteArray())
				case c == 3:
					if !v.IsNull() {
						e.Host = string(v.ByteArray())
					}
				case c == 4:
					e.GPU = int16(v.Int32())
				case c == 5:
					e.SampledAt = v.Int64()
				default:
					if !v.IsNull() {
						e.Valid[c-6] = true
						e.Metrics[c-6] = v.Float()
					}
				}
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
	}
}
