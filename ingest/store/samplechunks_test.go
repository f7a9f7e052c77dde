package store_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/ingest/telemetry"
	"github.com/inferencex/ingest/migrations"
	"github.com/inferencex/ingest/schema"
)

// sample is one row as the gpu_metric_samples view shows it; a nil
// metric is NULL.
type sample struct {
	series  int64
	gpu     int16
	at      int64 // microseconds since the epoch
	power   *float32
	temp    *float32
	gfxVolt *float32
}

func f32(v float32) *float32 { return &v }

// sampleBatch builds one canonical batch of a series' samples.
func sampleBatch(t *testing.T, mem memory.Allocator, series int64, rows []sample) telemetry.SampleBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, telemetry.SampleSchema)
	defer b.Release()
	for _, r := range rows {
		require.Equal(t, series, r.series)
		b.Field(telemetry.ColGPU).(*array.Int16Builder).Append(r.gpu)
		b.Field(telemetry.ColTimestamp).(*array.TimestampBuilder).Append(arrow.Timestamp(r.at))
		for m := range telemetry.NumMetrics {
			fb := b.Field(telemetry.ColMetrics + m).(*array.Float32Builder)
			var v *float32
			switch m {
			case telemetry.MetricPower:
				v = r.power
			case telemetry.MetricTemperature:
				v = r.temp
			case telemetry.MetricGFXVoltage:
				v = r.gfxVolt
			}
			if v == nil {
				fb.AppendNull()
			} else {
				fb.Append(*v)
			}
		}
	}
	return telemetry.SampleBatch{SeriesID: series, Rec: b.NewRecordBatch()}
}

// viewSamples reads the gpu_metric_samples view in key order; every
// metric the test does not set must read NULL.
func viewSamples(t *testing.T, st *store.Store) []sample {
	t.Helper()
	ctx := context.Background()
	var others string
	for m, name := range telemetry.MetricNames {
		if m != telemetry.MetricPower && m != telemetry.MetricTemperature && m != telemetry.MetricGFXVoltage {
			others += " AND " + name + " IS NULL"
		}
	}
	rows, err := st.Pool().Query(ctx, `SELECT series_id, gpu_index, sampled_at, power_w, temperature_c, gfx_voltage_mv,
		true`+others+` FROM gpu_metric_samples ORDER BY series_id, gpu_index, sampled_at`)
	require.NoError(t, err)
	defer rows.Close()
	var out []sample
	for rows.Next() {
		var s sample
		var at time.Time
		var othersNull bool
		require.NoError(t, rows.Scan(&s.series, &s.gpu, &at, &s.power, &s.temp, &s.gfxVolt, &othersNull))
		require.True(t, othersNull, "a metric never set reads NULL")
		s.at = at.UnixMicro()
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// chunkLayout lists the chunk rows: series/gpu/chunk, sample count and
// which metric columns are NULL.
func chunkLayout(t *testing.T, st *store.Store) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT format('%s/%s/%s n=%s power=%s temp=%s gfx=%s',
		series_id, gpu_index, chunk, sample_count, power_w IS NOT NULL, temperature_c IS NOT NULL, gfx_voltage_mv IS NOT NULL)
		FROM gpu_metric_sample_chunks ORDER BY series_id, gpu_index, chunk`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// TestSampleChunks: samples are stored as one chunk row per GPU run of a
// batch (a metric no sample has is NULL, not an array of NULLs), the view
// shows exactly the samples sent, and migrating down to per-sample rows
// and up again keeps them.
func TestSampleChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)

	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).UnixMicro()
	sec := time.Second.Microseconds()
	var want []sample
	add := func(series int64, gpu int16, i int64, power, temp, gfx *float32) sample {
		s := sample{series: series, gpu: gpu, at: t0 + i*sec, power: power, temp: temp, gfxVolt: gfx}
		want = append(want, s)
		return s
	}
	// Series 7: GPU 0 and GPU 1 in one batch (two chunks), temperature
	// missing on one sample, no GFX voltage at all; a second batch of
	// GPU 1 is its chunk 1. Series 8: AMD-like, every metric present.
	batches := [][]sample{
		{add(7, 0, 0, f32(300), f32(60), nil), add(7, 0, 1, f32(301.5), nil, nil), add(7, 0, 2, f32(302), f32(61), nil),
			add(7, 1, 0, f32(290), f32(58), nil), add(7, 1, 1, f32(291), f32(59), nil)},
		{add(7, 1, 2, f32(292), f32(59.5), nil), add(7, 1, 3, f32(293), f32(60), nil)},
		{add(8, 3, 0, f32(700), f32(80), f32(1150)), add(8, 3, 1, f32(710), f32(81), f32(1149.5))},
	}

	tx, err := st.BeginRun(ctx, start(42))
	require.NoError(t, err)
	i := 0
	n, err := tx.CopySamples(ctx, func() (telemetry.SampleBatch, bool, error) {
		if i == len(batches) {
			return telemetry.SampleBatch{}, false, nil
		}
		i++
		return sampleBatch(t, mem, batches[i-1][0].series, batches[i-1]), true, nil
	})
	require.NoError(t, err)
	require.EqualValues(t, len(want), n, "the samples stored")
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))

	require.Equal(t, []string{
		"7/0/0 n=3 power=t temp=t gfx=f",
		"7/1/0 n=2 power=t temp=t gfx=f",
		"7/1/1 n=2 power=t temp=t gfx=f",
		"8/3/0 n=2 power=t temp=t gfx=t",
	}, chunkLayout(t, st))
	require.Equal(t, want, viewSamples(t, st))

	// Down to per-sample rows (below 000011_sample_chunks): the table
	// holds what the view showed.
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	steps := 0
	for _, name := range ups {
		if name >= "000011_" {
			steps++
		}
	}
	require.NoError(t, st.MigrateDown(ctx, steps))
	var kind string
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE relname = 'gpu_metric_samples'`).Scan(&kind))
	require.Equal(t, "r", kind, "a table again")
	require.Equal(t, want, viewSamples(t, st))
	// Up again: each GPU's samples are regrouped into one chunk.
	_, _, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{
		"7/0/0 n=3 power=t temp=t gfx=f",
		"7/1/0 n=4 power=t temp=t gfx=f",
		"8/3/0 n=2 power=t temp=t gfx=t",
	}, chunkLayout(t, st))
	require.Equal(t, want, viewSamples(t, st))

	// A ragged chunk is refused by the table itself.
	_, err = st.Pool().Exec(ctx, `INSERT INTO gpu_metric_sample_chunks (series_id, gpu_index, chunk, sample_count, sampled_at, power_w)
		VALUES (9, 0, 0, 2, ARRAY[now(), now() + interval '1 s'], ARRAY[1]::real[])`)
	require.ErrorContains(t, err, "violates check constraint")
	_, err = st.Pool().Exec(ctx, `INSERT INTO gpu_metric_sample_chunks (series_id, gpu_index, chunk, sample_count, sampled_at)
		VALUES (9, 0, 0, 2, ARRAY[now(), NULL])`)
	require.ErrorContains(t, err, "violates check constraint")
}
