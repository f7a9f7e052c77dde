package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/internal/stagetest"
	"github.com/inferencex/ingest/ingest/stages/telemetry"
)

// The GPU-metrics series of the winning points are written with every
// sample, the power audits' among them; the series of stale attempts are
// skipped.
func TestStageWritesWinningSeries(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    generate.Options
	}{
		{"folders", generate.Options{Points: 10, Seed: 8, RunID: 920401, Retries: 2, Telemetry: true, PowerAudits: true}},
		{"zips", generate.Options{Points: 6, Seed: 9, RunID: 920402, Zip: true, Telemetry: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stagetest.Open(t, tc.o)
			m, sum := r.Manifest, r.Env.Sum
			require.Positive(t, m.TelemetryWinnerSeries)
			c, err := telemetry.Run(t.Context(), r.W, r.Env)
			require.NoError(t, err)
			sum.AddCounters(c)
			require.Empty(t, sum.Failures)
			require.Empty(t, sum.PowerWarnings)
			require.Equal(t, m.Rows(false).Power, sum.Rows.Power)
			require.Equal(t, int64(m.TelemetrySeries), sum.Details.PowerSeriesRead)
			require.Equal(t, m.TelemetrySamples, sum.Stats.GPUMetricSamplesNew)
		})
	}
}
