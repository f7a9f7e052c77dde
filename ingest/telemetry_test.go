package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// nvidiaCSV is an nvidia-smi telemetry file: gpus GPUs at watts each, one
// sample per second for seconds+1 ticks from start.
func nvidiaCSV(start time.Time, gpus, seconds int, watts float64) string {
	var b strings.Builder
	b.WriteString("timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]\n")
	for s := 0; s <= seconds; s++ {
		ts := start.Add(time.Duration(s) * time.Second).Format("2006/01/02 15:04:05.000")
		for g := 0; g < gpus; g++ {
			fmt.Fprintf(&b, "%s, %d, %.2f W, 40, 1965 MHz, 3996 MHz, 100 %%, 9 %%\n", ts, g, watts)
		}
	}
	return b.String()
}

// powerRow is a benchmark row publishing valid power for gpus GPUs.
func powerRow(conc int, avg float64, gpus int, seconds float64, extra map[string]any) map[string]any {
	total := avg * float64(gpus)
	energy := total * seconds
	row := map[string]any{
		"power_metric_schema_version": 2, "power_valid": 1, "avg_power_w": avg, "avg_total_gpu_power_w": total,
		"total_gpu_energy_j": energy, "joules_per_output_token": energy / 100000,
	}
	for k, v := range extra {
		row[k] = v
	}
	return benchRow(conc, row)
}

const dcgmCSV = `schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w
1,1787300000.0,0,node-p,0,GPU-a,400.0
1,1787300000.0,0,node-d,0,GPU-b,600.0
1,1787300001.0,1,node-p,0,GPU-a,420.0
1,1787300001.0,1,node-d,0,GPU-b,620.0
1,1787300002.0,2,node-p,0,GPU-a,410.0
1,1787300002.0,2,node-d,0,GPU-b,610.0
`

const amdCSV = `timestamp,gpu,gfx_activity,umc_activity,socket_power,gfx_0_clk,mem_0_clk,edge,hotspot,mem
1787300000,0,98,41,1000,2398,1900,48,71,62
1787300000,1,97,40,1000,2401,1900,47,N/A,61
1787300010,0,99,43,1000,2395,1900,48,72,62
1787300010,1,98,42,1000,2401,1900,47,70,61
`

// telemetryTree writes a run with one case per telemetry layout and
// outcome; it returns the expected sample count of a first ingest.
func telemetryTree(t *testing.T, dir string) int64 {
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	// S1: gpu_metrics_ NVIDIA, published power matches (8 GPUs × 500 W × 10 s).
	perJob(t, dir, "s1", powerRow(4, 500, 8, 10, nil))
	writeFile(t, filepath.Join(dir, "gpu_metrics_s1", "gpu_metrics.csv"), nvidiaCSV(start, 8, 10, 500))
	// S2: published 400 W, measured 500 W: a power warning.
	perJob(t, dir, "s2", powerRow(8, 400, 8, 10, map[string]any{"power_audit": map[string]any{
		"source": "power_validation_s2.json", "window_start_unix": float64(start.Unix()), "window_end_unix": float64(start.Unix() + 10),
		"expected_gpu_count": 8, "observed_gpu_count": 8}}))
	// Its collector's clock ran at +01:00 (the context sidecar says so):
	// only then does the series cover the audit window.
	writeFile(t, filepath.Join(dir, "gpu_metrics_s2", "gpu_metrics.csv"), nvidiaCSV(start.Add(time.Hour), 8, 10, 500))
	writeFile(t, filepath.Join(dir, "gpu_metrics_s2", "gpu_metrics_context.json"), `{"timestamp_timezone": "+01:00"}`)
	// S3: a ragged row: failed; the required-power manifest names this point.
	perJob(t, dir, "s3", powerRow(16, 500, 8, 10, nil))
	writeFile(t, filepath.Join(dir, "gpu_metrics_s3", "gpu_metrics.csv"), nvidiaCSV(start, 8, 2, 500)+"2026/11/20 08:00:03.000, 0\n")
	// S4: a multinode DCGM bundle in power_audit_: one series per host.
	perJob(t, dir, "s4", benchRow(32, nil))
	writeFile(t, filepath.Join(dir, "power_audit_s4", "LOGS", "power", "samples.csv"), dcgmCSV)
	writeFile(t, filepath.Join(dir, "power_audit_s4", "LOGS", "power", "manifest.json"), `{"schema_version": 1}`)
	// S5: AgentX telemetry inside the raw sibling, with a time-zone offset.
	perJob(t, dir, "s5", powerRow(64, 500, 2, 10, nil))
	writeFile(t, filepath.Join(dir, "agentic_s5", "gpu_metrics.csv"), nvidiaCSV(start.Add(2*time.Hour), 2, 10, 500))
	writeFile(t, filepath.Join(dir, "agentic_s5", "agentic_power_timezone_offset.txt"), "+0200\n")
	writeFile(t, filepath.Join(dir, "agentic_s5", "aiperf_artifacts", "profile_export.jsonl"), "{}\n")
	// S6: telemetry without a benchmark point: skipped, not read.
	writeFile(t, filepath.Join(dir, "gpu_metrics_s6.zip"), "not a zip at all")
	// S7: AMD with energy accumulators (2 GPUs × 1000 W × 10 s = 20 kJ; the
	// counters say 30 kJ: an accumulator warning).
	perJob(t, dir, "s7", powerRow(128, 1000, 2, 10, nil))
	writeFile(t, filepath.Join(dir, "gpu_metrics_s7", "gpu_metrics.csv"), amdCSV)
	writeFile(t, filepath.Join(dir, "gpu_metrics_s7", "gpu_metrics_energy_start.csv"), "gpu,total_energy_consumption\n0,100\n1,100\n")
	writeFile(t, filepath.Join(dir, "gpu_metrics_s7", "gpu_metrics_energy_end.csv"), "gpu,total_energy_consumption\n0,15100\n1,15100\n")
	// S1 also has a power_audit_ copy: gpu_metrics_ wins, it is not read.
	writeFile(t, filepath.Join(dir, "power_audit_s1", "gpu_metrics.csv"), "garbage")
	// The required-power manifest: S1 conc 4 (valid) and S3 conc 16 (its telemetry failed).
	fp := strings.Repeat("ab", 32)
	writeFile(t, filepath.Join(dir, "required-power-sweep-manifest", "sweep_manifest.json"), fmt.Sprintf(`{
  "schema-version": 2, "run-id": 777, "run-attempt": 1,
  "points": [
    {"config_key": "s1", "identity": {"recipe_fingerprint": %q, "concurrency": 4, "benchmark_type": "single_turn", "isl": 8192, "osl": 1024, "hardware": "b200", "precision": "fp8"}},
    {"config_key": "s3", "identity": {"recipe_fingerprint": %q, "concurrency": 16, "benchmark_type": "single_turn", "isl": 8192, "osl": 1024}}
  ]}`, fp, fp))
	return 8*11 + 8*11 + 6 + 2*11 + 4
}

func TestTelemetryFirstIngestAndRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e.deps.Arrow = mem
	dir := t.TempDir()
	wantSamples := telemetryTree(t, dir)
	cfg := ingest.Config{Run: RunID(777, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}}

	sum := e.mustIngest(dir, cfg)
	mem.AssertSize(t, 0)
	require.Equal(t, schema.Counts{New: 6, Skipped: 1, Failed: 1}, sum.Rows.Power, "%+v", sum.Failures)
	require.EqualValues(t, 8, sum.Details.PowerSeriesRead, "items read, counted apart from their outcome")
	require.Equal(t, wantSamples, sum.Stats.GPUMetricSamplesNew)
	require.EqualValues(t, wantSamples, e.count("SELECT count(*) FROM gpu_metric_samples"))
	require.EqualValues(t, 6, e.count("SELECT count(*) FROM gpu_metric_series"))
	// S1, S2, S5, S7 publish valid power and have a series (S3's failed).
	require.EqualValues(t, 4, sum.Stats.PowerPublicationPoints)

	var fails []string
	for _, f := range sum.Failures {
		fails = append(fails, fmt.Sprintf("%s|%s|%s|%s", f.Category, f.Artifact, f.File, f.Reason))
	}
	require.Equal(t, []string{
		"power|gpu_metrics_s3|gpu_metrics.csv|line 26: row has 2 fields, the header 8",
		"run|required-power-sweep-manifest|sweep_manifest.json|required power point s3 conc 16: no stored telemetry series",
	}, fails)
	var warns []string
	for _, w := range sum.PowerWarnings {
		warns = append(warns, fmt.Sprintf("%s|%s|%s|%g|%g", w.Artifact, w.File, w.Field, w.Published, w.Measured))
	}
	require.Equal(t, []string{
		"gpu_metrics_s2|gpu_metrics.csv|avg_power_w|400|500",
		"gpu_metrics_s2|gpu_metrics.csv|total_gpu_energy_j|32000|40000",
		"gpu_metrics_s7|gpu_metrics.csv|amd_energy_accumulator|30000|20000",
	}, warns)

	// The DCGM bundle: one series per host, linked to the point.
	require.EqualValues(t, 2, e.count(`SELECT count(*) FROM gpu_metric_series WHERE artifact_name = 'power_audit_s4'
		AND file_name IN ('LOGS/power/samples.csv#node-d', 'LOGS/power/samples.csv#node-p')`))
	require.EqualValues(t, 6, e.count("SELECT count(*) FROM benchmark_result_gpu_metrics"))
	// AgentX: local 10:00 at +02:00 is 08:00 UTC.
	var started time.Time
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT started_at FROM gpu_metric_series WHERE artifact_name = 'agentic_s5'`).Scan(&started))
	require.Equal(t, time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC), started.UTC())
	var avg, energy float64
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT avg_power_w, energy_j FROM gpu_metric_series WHERE artifact_name = 'gpu_metrics_s1'`).Scan(&avg, &energy))
	require.InDelta(t, 500, avg, 1e-6)
	require.InDelta(t, 40000, energy, 1e-6)

	tables := []string{"gpu_metric_series", "gpu_metric_samples", "benchmark_result_gpu_metrics"}
	before := e.checksums(tables...)
	again := e.mustIngest(dir, cfg)
	mem.AssertSize(t, 0)
	require.Equal(t, schema.Counts{Duplicate: 6, Skipped: 1, Failed: 1}, again.Rows.Power)
	require.EqualValues(t, 8, again.Details.PowerSeriesRead)
	require.Zero(t, again.Stats.GPUMetricSamplesNew)
	require.EqualValues(t, 4, again.Stats.PowerPublicationPoints)
	require.Equal(t, sum.PowerWarnings, again.PowerWarnings, "a rerun reports the same warnings")
	require.Equal(t, before, e.checksums(tables...))
}

// The telemetry stage holds a large heap only while it runs, and only on
// a run with telemetry: it asks once and is done once.
func TestTelemetryAsksForALargeHeapWhileItRuns(t *testing.T) {
	t.Parallel()
	for _, withTelemetry := range []bool{true, false} {
		e := newEnv(t)
		var asked, done int
		e.deps.LargeHeap = func() func() {
			asked++
			return func() { done++ }
		}
		dir := t.TempDir()
		if withTelemetry {
			telemetryTree(t, dir)
		} else {
			_, err := generate.Write(dir, generate.Options{Points: 5, Seed: 4})
			require.NoError(t, err)
		}
		cfg := ingest.Config{}
		if withTelemetry {
			cfg = ingest.Config{Run: RunID(778, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}}
		}
		e.mustIngest(dir, cfg)
		want := 0
		if withTelemetry {
			want = 1
		}
		require.Equal(t, [2]int{want, want}, [2]int{asked, done}, "with telemetry: %v", withTelemetry)
	}
}

func TestTelemetryChangedFileReplacesItsSeries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	perJob(t, dir, "s1", powerRow(4, 500, 8, 10, nil))
	csv := filepath.Join(dir, "gpu_metrics_s1", "gpu_metrics.csv")
	writeFile(t, csv, nvidiaCSV(start, 8, 10, 500))
	cfg := ingest.Config{Run: RunID(778, 1), Meta: schema.RunMeta{CreatedAt: start}}
	e.mustIngest(dir, cfg)
	writeFile(t, csv, nvidiaCSV(start, 8, 20, 500))
	sum := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 1}, sum.Rows.Power)
	require.EqualValues(t, 8*21, sum.Stats.GPUMetricSamplesNew)
	require.EqualValues(t, 8*21, e.count("SELECT count(*) FROM gpu_metric_samples"))
	require.EqualValues(t, 1, e.count("SELECT count(*) FROM gpu_metric_series"))
	require.EqualValues(t, 1, e.count("SELECT count(*) FROM benchmark_result_gpu_metrics"))
}

// The real PowerX golden fixture: an AgentX point whose telemetry rides in
// agentic_golden, bound by the required-power manifest (sha256 of every
// evidence file, device energies summing to the published total).
func TestTelemetryRealPowerXGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e.deps.Arrow = mem
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "powerx-golden"))))
	require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
	cfg := ingest.Config{Run: RunID(123, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)}}

	sum := e.mustIngest(dir, cfg)
	mem.AssertSize(t, 0)
	require.EqualValues(t, 1, sum.Rows.Benchmark.New, "%+v", sum.Failures)
	require.Equal(t, schema.Counts{New: 1}, sum.Rows.Power)
	require.EqualValues(t, 2, sum.Stats.GPUMetricSamplesNew)
	require.EqualValues(t, 1, sum.Stats.PowerPublicationPoints)
	require.Empty(t, sum.PowerWarnings, "500 W over the 2 s window: 1000 J, as published")
	for _, f := range sum.Failures {
		require.NotEqual(t, "required-power-sweep-manifest", f.Artifact, "the manifest contract holds: %s", f.Reason)
		require.NotEqual(t, schema.CategoryPower, f.Category, f.Reason)
	}
	var energy float64
	var source string
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT energy_j, window_source FROM gpu_metric_series WHERE artifact_name = 'agentic_golden'`).Scan(&energy, &source))
	require.InDelta(t, 1000, energy, 1e-9)
	require.Equal(t, "power_validation.json", source)

	// Tamper with an evidence file: the manifest names the point.
	writeFile(t, filepath.Join(dir, "agentic_golden", "power_node.txt"), "other-node\n")
	again := e.mustIngest(dir, cfg)
	var reasons []string
	for _, f := range again.Failures {
		if f.Artifact == "required-power-sweep-manifest" {
			reasons = append(reasons, f.Reason)
		}
	}
	require.Equal(t, []string{"required power point golden conc 1: evidence agentic_golden/power_node.txt does not match its sha256"}, reasons)
	require.Equal(t, schema.Counts{Duplicate: 1}, again.Rows.Power, "power_node.txt is no part of the series digest")
}

// A zipped telemetry artifact is identified by the zip's digest: a rerun
// reads none of its CSVs, a changed zip replaces its series.
func TestTelemetryZipDigest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	perJob(t, dir, "s1", powerRow(4, 500, 8, 10, nil))
	zipPath := filepath.Join(dir, "gpu_metrics_s1.zip")
	writeZip(t, zipPath, map[string]string{"gpu_metrics.csv": nvidiaCSV(start, 8, 10, 500)})
	cfg := ingest.Config{Run: RunID(779, 1), Meta: schema.RunMeta{CreatedAt: start}}
	first := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 1}, first.Rows.Power)
	again := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{Duplicate: 1}, again.Rows.Power)
	require.Zero(t, again.Stats.GPUMetricSamplesNew)
	writeZip(t, zipPath, map[string]string{"gpu_metrics.csv": nvidiaCSV(start, 8, 12, 500)})
	changed := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 1}, changed.Rows.Power)
	require.EqualValues(t, 8*13, changed.Stats.GPUMetricSamplesNew)
	require.Equal(t, 8*13, e.count("SELECT count(*) FROM gpu_metric_samples"))
}

// A generated run with telemetry (nvidia-smi per fixed-seq point, DCGM
// bundles per multinode job, stale attempts) ingests exactly as its
// manifest says.
func TestTelemetryGeneratedRunMatchesManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	m, err := generate.Write(dir, generate.Options{Points: 60, Seed: 3, Retries: 4, Telemetry: true})
	require.NoError(t, err)
	require.Greater(t, m.TelemetrySeries, m.TelemetryWinnerSeries, "stale attempts have telemetry too")
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{New: int64(m.TelemetryWinnerSeries), Skipped: int64(m.TelemetrySeries - m.TelemetryWinnerSeries)},
		sum.Rows.Power, "%+v", sum.Failures)
	require.Equal(t, m.TelemetrySamples, sum.Stats.GPUMetricSamplesNew)
	require.Greater(t, e.count(`SELECT count(*) FROM gpu_metric_series WHERE format = 'dcgm'`), 0)
	again := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{Duplicate: int64(m.TelemetryWinnerSeries), Skipped: int64(m.TelemetrySeries - m.TelemetryWinnerSeries)},
		again.Rows.Power)
	require.Zero(t, again.Stats.GPUMetricSamplesNew)
}

// A zipped DCGM bundle is identified by the zip's digest too: a rerun
// neither decompresses it nor scans it for hosts (its stored series say
// how many there are); a changed zip is scanned and parsed again.
func TestTelemetryZippedDCGMBundle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "s4", benchRow(32, nil))
	zipPath := filepath.Join(dir, "power_audit_s4.zip")
	writeZip(t, zipPath, map[string]string{"LOGS/power/samples.csv": dcgmCSV, "LOGS/power/manifest.json": `{"schema_version": 1}`})
	cfg := ingest.Config{Run: RunID(781, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)}}
	first := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 2}, first.Rows.Power, "one series per host: %+v", first.Failures)
	require.EqualValues(t, 6, first.Stats.GPUMetricSamplesNew)
	again := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{Duplicate: 2}, again.Rows.Power)
	require.Zero(t, again.Stats.GPUMetricSamplesNew)
	third := dcgmCSV + "1,1787300000.0,0,node-x,0,GPU-c,500.0\n1,1787300001.0,1,node-x,0,GPU-c,510.0\n"
	writeZip(t, zipPath, map[string]string{"LOGS/power/samples.csv": third, "LOGS/power/manifest.json": `{"schema_version": 1}`})
	changed := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 3}, changed.Rows.Power, "%+v", changed.Failures)
	require.Equal(t, 3, e.count(`SELECT count(*) FROM gpu_metric_series WHERE format = 'dcgm'`))
	require.Equal(t, 8, e.count(`SELECT count(*) FROM gpu_metric_samples`))
}
