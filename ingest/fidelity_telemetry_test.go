package ingest_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/telemetry"
	"github.com/inferencex/ingest/schema"
)

// A telemetry value a real column cannot hold (1e308 overflows float32 and
// was stored as Infinity) fails its line, named in the report with
// artifact, file, line and field, counted as a failed power item; the good
// series lands and no sample holds ±Infinity or NaN (issue 12).
func TestTelemetryValueOutOfRangeFailsItsLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // clock: 2026-11-21T06:00Z
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	good := nvidiaCSV(start, 8, 10, 500)
	line := func(temp, sm string) string {
		return start.Add(11*time.Second).Format("2006/01/02 15:04:05.000") + ", 0, 500 W, " + temp + ", " + sm + ", 3996 MHz, 100 %, 9 %\n"
	}
	files := map[string]string{
		"ok":   good,
		"temp": good + line("1e308", "1965 MHz"),
		"sm":   good + line("40", "3.5e38 MHz"),
		"nan":  good + line("NaN", "1965 MHz"),
	}
	conc := 4
	for _, name := range []string{"ok", "temp", "sm", "nan"} {
		perJob(t, dir, name, powerRow(conc, 500, 8, 10, nil))
		conc *= 2
		writeFile(t, filepath.Join(dir, "gpu_metrics_"+name, "gpu_metrics.csv"), files[name])
	}
	cfg := ingest.Config{Run: RunID(781, 1), Meta: schema.RunMeta{CreatedAt: start}}
	want := []string{
		"power|gpu_metrics_nan|gpu_metrics.csv|line 90: field temperature.gpu out of range (NaN)",
		"power|gpu_metrics_sm|gpu_metrics.csv|line 90: field clocks.current.sm out of range (3.5e38 MHz)",
		"power|gpu_metrics_temp|gpu_metrics.csv|line 90: field temperature.gpu out of range (1e308)",
	}
	for range 2 { // a rerun reports the same
		sum := e.mustIngest(dir, cfg)
		var fails []string
		for _, f := range sum.Failures {
			fails = append(fails, fmt.Sprintf("%s|%s|%s|%s", f.Category, f.Artifact, f.File, f.Reason))
		}
		require.ElementsMatch(t, want, fails)
		require.EqualValues(t, 3, sum.Rows.Power.Failed)
		require.EqualValues(t, 1, sum.Rows.Power.New+sum.Rows.Power.Duplicate, "%+v", sum.Rows.Power)
		require.EqualValues(t, 4, sum.Rows.Benchmark.New+sum.Rows.Benchmark.Duplicate, "every benchmark row lands")
	}
	require.Equal(t, 1, e.count(`SELECT count(*) FROM gpu_metric_series`))
	require.Equal(t, 8*11, e.count(`SELECT count(*) FROM gpu_metric_samples`))
	var nonFinite []string
	for _, c := range telemetry.MetricNames {
		nonFinite = append(nonFinite, fmt.Sprintf("%[1]s IN ('Infinity', '-Infinity', 'NaN')", c))
	}
	require.Equal(t, 0, e.count(`SELECT count(*) FROM gpu_metric_samples WHERE `+strings.Join(nonFinite, " OR ")))
}
