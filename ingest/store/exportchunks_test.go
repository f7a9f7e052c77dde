package store

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// TestExportOrdersAGPUsChunks: the export hands out one GPU's samples in
// time order even when its chunks hold them out of order (a collector
// whose clock stepped back), with each sample's own metrics; a metric a
// chunk lacks is NULL; a ragged chunk is an error.
func TestExportOrdersAGPUsChunks(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	at := func(secs ...int) []time.Time {
		var out []time.Time
		for _, s := range secs {
			out = append(out, t0.Add(time.Duration(s)*time.Second))
		}
		return out
	}
	power := func(vals ...float32) []pgtype.Float4 {
		var out []pgtype.Float4
		for _, v := range vals {
			out = append(out, pgtype.Float4{Float32: v, Valid: v >= 0})
		}
		return out
	}
	var g gpuSamples
	g.reset(7, 1)
	c := sampleChunk{series: 7, gpu: 1, at: at(3, 1)}
	c.metrics[telemetry.MetricPower] = power(303, 301)
	c.metrics[telemetry.MetricTemperature] = power(63, -1)
	require.NoError(t, g.add(&c))
	c = sampleChunk{series: 7, gpu: 1, at: at(2, 4)}
	c.metrics[telemetry.MetricPower] = power(302, 304)
	require.NoError(t, g.add(&c))

	type got struct {
		secs  int64
		power float32
		temp  string
	}
	var out []got
	row := telemetry.ExportRow{SeriesID: 7, GPU: 1}
	require.NoError(t, g.emit(&row, func(r *telemetry.ExportRow) error {
		temp := "NULL"
		if r.Valid[telemetry.MetricTemperature] {
			temp = "63"
		}
		require.True(t, r.Valid[telemetry.MetricPower])
		require.False(t, r.Valid[telemetry.MetricGFXVoltage])
		out = append(out, got{(r.SampledAt - t0.UnixMicro()) / 1e6, r.Metrics[telemetry.MetricPower], temp})
		return nil
	}))
	require.Equal(t, []got{{1, 301, "NULL"}, {2, 302, "NULL"}, {3, 303, "63"}, {4, 304, "NULL"}}, out)

	c = sampleChunk{series: 7, gpu: 1, at: at(5, 6)}
	c.metrics[telemetry.MetricPower] = power(305)
	require.ErrorContains(t, g.add(&c), "chunk with 2 times has 1 power_w values")
}
