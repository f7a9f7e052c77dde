package ingest_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// Bad telemetry input (the robustness review's cases): every bad file
// fails alone, named by artifact, file and line, counted in the power
// row, and writes nothing; the good series of the run still land, and a
// rerun reports the same.
func TestTelemetryBadInputFailsOnlyItsFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // clock: 2026-11-21T06:00Z
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e.deps.Arrow = mem
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	good := nvidiaCSV(start, 8, 10, 500)
	ts := func(d time.Duration) string { return start.Add(d).Format("2006/01/02 15:04:05.000") }

	nvidia := map[string]string{
		// good: lands
		"ok": good,
		// impossible power in the middle of a good file
		"neg":  good + ts(11*time.Second) + ", 0, -860.13 W, 40, 1965 MHz, 3996 MHz, 100 %, 9 %\n",
		"huge": good + ts(11*time.Second) + ", 0, 1e30 W, 40, 1965 MHz, 3996 MHz, 100 %, 9 %\n",
		"nan":  good + ts(11*time.Second) + ", 0, NaN W, 40, 1965 MHz, 3996 MHz, 100 %, 9 %\n",
		// one line an hour back; one line in year 9999
		"back":  good + ts(-time.Hour) + ", 0, 500 W, 40, 1965 MHz, 3996 MHz, 100 %, 9 %\n",
		"y9999": good + "9999/11/20 08:00:11.000, 0, 500 W, 40, 1965 MHz, 3996 MHz, 100 %, 9 %\n",
	}
	conc := 4
	for name, body := range nvidia {
		perJob(t, dir, name, powerRow(conc, 500, 8, 10, nil))
		conc *= 2
		writeFile(t, filepath.Join(dir, "gpu_metrics_"+name, "gpu_metrics.csv"), body)
	}
	dcgm := map[string]string{
		"dcgmok": dcgmCSV,
		// a hostname with an invalid byte and one with a NUL: two hosts each
		"dcgmhost": dcgmCSV + "1,1787300003.0,3,no\xff\xfede,0,GPU-c,400.0\n",
		"dcgmnul":  dcgmCSV + "1,1787300003.0,3,no\x00de,0,GPU-c,400.0\n",
		// power_w named twice
		"dcgmdup": strings.Replace(dcgmCSV, "power_w\n", "power_w,power_w\n", 1),
		// NaN power (it was dropped silently; nvidia-smi failed the file)
		"dcgmnan": dcgmCSV + "1,1787300003.0,3,node-p,0,GPU-a,NaN\n",
	}
	for name, body := range dcgm {
		perJob(t, dir, name, benchRow(conc, nil))
		conc *= 2
		writeFile(t, filepath.Join(dir, "power_audit_"+name, "LOGS", "power", "samples.csv"), body)
	}
	cfg := ingest.Config{Run: RunID(780, 1), Meta: schema.RunMeta{CreatedAt: start}}

	want := []string{
		"power|gpu_metrics_back|gpu_metrics.csv|line 90: timestamp 2026-11-20T07:00:00.000Z goes back 1h0m10s from GPU 0's sample at 2026-11-20T08:00:10.000Z (line 82)",
		"power|power_audit_dcgmdup|LOGS/power/samples.csv|line 1: dcgm header names the \"power_w\" column twice (columns 7 and 8): " +
			"\"schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w,power_w\"",
		"power|power_audit_dcgmhost|LOGS/power/samples.csv|line 8: hostname \"no\\xff\\xfede\": not valid UTF-8",
		"power|power_audit_dcgmnan|LOGS/power/samples.csv|line 8: non-finite power NaN",
		"power|power_audit_dcgmnul|LOGS/power/samples.csv|line 8: hostname \"no\\x00de\": contains a NUL or control character",
		"power|gpu_metrics_huge|gpu_metrics.csv|line 90: impossible power 1e+30 W (above the 5000 W bound per GPU)",
		"power|gpu_metrics_nan|gpu_metrics.csv|line 90: non-finite power \"NaN W\"",
		"power|gpu_metrics_neg|gpu_metrics.csv|line 90: impossible power -860.13 W (negative)",
		"power|gpu_metrics_y9999|gpu_metrics.csv|line 90: impossible timestamp 9999-11-20T08:00:11.000Z (after 2026-11-22T06:00:00.000Z, a day past the ingest)",
	}
	for range 2 { // a rerun: the good series are duplicates, the bad files fail again
		sum := e.mustIngest(dir, cfg) // checks report.CheckInvariant
		mem.AssertSize(t, 0)
		var fails []string
		for _, f := range sum.Failures {
			if f.Category == schema.CategoryPower {
				fails = append(fails, fmt.Sprintf("%s|%s|%s|%s", f.Category, f.Artifact, f.File, f.Reason))
			}
		}
		require.Equal(t, want, fails)
		// failed items: 5 single-node files, 2 DCGM files of 3 hosts, 2 of 2
		require.EqualValues(t, 5+3+3+2+2, sum.Rows.Power.Failed)
		require.EqualValues(t, 1+2, sum.Rows.Power.New+sum.Rows.Power.Duplicate, "%+v", sum.Rows.Power)
		require.EqualValues(t, 11, sum.Rows.Benchmark.New+sum.Rows.Benchmark.Duplicate, "every benchmark row lands")
	}
	require.EqualValues(t, 3, e.count("SELECT count(*) FROM gpu_metric_series"))
	require.EqualValues(t, 8*11+6, e.count("SELECT count(*) FROM gpu_metric_samples"))
	require.EqualValues(t, 0, e.count(`SELECT count(*) FROM gpu_metric_series WHERE artifact_name NOT IN ('gpu_metrics_ok', 'power_audit_dcgmok')`))
	// Nothing impossible reached a series.
	require.EqualValues(t, 0, e.count(`SELECT count(*) FROM gpu_metric_samples WHERE power_w < 0 OR power_w > 5000 OR power_w = 'NaN'`))
	require.EqualValues(t, 0, e.count(`SELECT count(*) FROM gpu_metric_series WHERE started_at < '2026-01-01' OR ended_at > '2027-01-01'`))
}
