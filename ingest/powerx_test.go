package ingest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// powerxNvidiaCSV is nvidia-smi telemetry as the reference's ingest test
// states it: two GPUs, two ticks, and the duplicate flush of the last row
// the monitor writes when it stops.
const powerxNvidiaCSV = `timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]
2026/09/11 04:19:41.982, 0, 187.80 W, 33, 120 MHz, 3996 MHz, 0 %, 0 %
2026/09/11 04:19:41.986, 1, 190.96 W, 39, 120 MHz, 3996 MHz, 0 %, 0 %
2026/09/11 04:19:42.990, 0, 912.10 W, 61, 1965 MHz, 3996 MHz, 98 %, 74 %
2026/09/11 04:19:42.994, 1, 905.30 W, 62, 1965 MHz, 3996 MHz, 97 %, 73 %
2026/09/11 04:19:42.994, 1, 905.30 W, 62, 1965 MHz, 3996 MHz, 97 %, 73 %
`

// amdDMESamples is a multinode power bundle from AMD Device Metrics
// Exporter hardware (samples schema v2: gpu_util_pct, sm_active), the
// shape of the reference's amd-device-metrics fixture with a second host.
const amdDMESamples = `schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w,gpu_util_pct,sm_active
2,1790360712.2282302,22,amd-a,0,100000000001,241,0,
2,1790360712.2282302,22,amd-b,0,100000000002,250.5,3,
2,1790360713.22827,23,amd-a,0,100000000001,241,0,
2,1790360713.22827,23,amd-b,0,100000000002,260.5,5,
2,1790360714.2282336,24,amd-a,0,100000000001,243,12,
`

// amdDMEManifest is the producer manifest of such a bundle: the DCGM
// power producer's name, the AMD exporter's metric and scope, and the
// retired power_profile key.
const amdDMEManifest = `{
  "schema_version": 1,
  "producer": "srt-slurm.dcgm-power",
  "power_profile": "amd-device-metrics",
  "source_metric": "gpu_power_usage",
  "unit": "W",
  "power_scope": "gpu_device_power_as_reported_by_amd_device_metrics_exporter",
  "samples_schema_version": 2,
  "sample_interval_seconds": 1,
  "status": "complete"
}`

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestPowerXSeriesColumnsStatsAndSidecars: what the site's PowerX reads
// need of a series (migration 000016): csv_sha256 of the CSV's bytes, the
// sidecars document the reference builds, stats_version 1 and the per-GPU
// digest in gpu_metric_gpu_stats; the vendor of a multinode bundle comes
// from its manifest. A rerun rewrites none of it.
func TestPowerXSeriesColumnsStatsAndSidecars(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	perJob(t, dir, "p1", benchRow(4, nil))
	writeFile(t, filepath.Join(dir, "gpu_metrics_p1", "gpu_metrics.csv"), powerxNvidiaCSV)
	writeFile(t, filepath.Join(dir, "gpu_metrics_p1", "gpu_metrics_context.json"), `{"timestamp_timezone": "UTC"}`)
	writeFile(t, filepath.Join(dir, "gpu_metrics_p1", "gpu_metrics_identity.csv"), "index, uuid, name\n0, GPU-a, NVIDIA B200\n1, GPU-b, NVIDIA B200\n")
	perJob(t, dir, "p2", benchRow(8, nil))
	writeFile(t, filepath.Join(dir, "power_audit_p2", "LOGS", "power", "samples.csv"), amdDMESamples)
	writeFile(t, filepath.Join(dir, "power_audit_p2", "LOGS", "power", "manifest.json"), amdDMEManifest)
	writeFile(t, filepath.Join(dir, "power_audit_p2", "power_validation_p2.json"), `{"selected_window": {"concurrency": 8}, "status": "valid"}`)
	cfg := ingest.Config{Run: RunID(991, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 9, 12, 8, 0, 0, 0, time.UTC)}}
	sum := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{New: 3}, sum.Rows.Power, "%+v", sum.Failures)

	type seriesRow struct {
		file, vendor, sha  string
		samples, gpus      int
		statsVersion       int
		sidecarsAsExpected bool
	}
	nvidiaSidecars := `{"context": {"timestamp_timezone": "UTC"},
		"identity": [{"index": "0", "uuid": "GPU-a", "name": "NVIDIA B200"}, {"index": "1", "uuid": "GPU-b", "name": "NVIDIA B200"}],
		"energyStart": null, "energyEnd": null,
		"seriesInventory": [{"fileName": "gpu_metrics.csv", "sampleCount": 4}]}`
	bundleSidecars := func(host, uuid string) string {
		return `{"context": ` + amdDMEManifest + `,
		"validations": {"power_validation_p2.json": {"selected_window": {"concurrency": 8}, "status": "valid"}},
		"identity": [{"hostname": "` + host + `", "gpu_index": 0, "gpu_uuid": "` + uuid + `"}],
		"energyStart": null, "energyEnd": null,
		"seriesInventory": [{"fileName": "LOGS/power/samples.csv#amd-a", "sampleCount": 3},
			{"fileName": "LOGS/power/samples.csv#amd-b", "sampleCount": 2}]}`
	}
	expected := map[string]string{
		"gpu_metrics.csv":              nvidiaSidecars,
		"LOGS/power/samples.csv#amd-a": bundleSidecars("amd-a", "100000000001"),
		"LOGS/power/samples.csv#amd-b": bundleSidecars("amd-b", "100000000002"),
	}
	rows, err := e.pool().Query(ctx, `SELECT file_name, vendor, csv_sha256, sample_count, gpu_count, stats_version, sidecars
		FROM gpu_metric_series ORDER BY file_name`)
	require.NoError(t, err)
	var got []seriesRow
	for rows.Next() {
		var r seriesRow
		var sidecars []byte
		require.NoError(t, rows.Scan(&r.file, &r.vendor, &r.sha, &r.samples, &r.gpus, &r.statsVersion, &sidecars))
		var same bool
		require.NoError(t, e.pool().QueryRow(ctx, `SELECT $1::jsonb = $2::jsonb`, string(sidecars), expected[r.file]).Scan(&same))
		r.sidecarsAsExpected = same
		if !same {
			t.Logf("%s sidecars: %s", r.file, sidecars)
		}
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []seriesRow{
		{"LOGS/power/samples.csv#amd-a", "amd", sha256Hex(amdDMESamples), 3, 1, 1, true},
		{"LOGS/power/samples.csv#amd-b", "amd", sha256Hex(amdDMESamples), 2, 1, 1, true},
		{"gpu_metrics.csv", "nvidia", sha256Hex(powerxNvidiaCSV), 4, 2, 1, true},
	}, got)

	// The digest of the NVIDIA series, as the reference's test states it
	// (power_w: two samples per GPU, max 912.1 and 905.3), and in full.
	type stat struct {
		gpu                                      int
		metric                                   string
		n                                        int
		min, max, mean, median, p95, p99, stddev float32
	}
	statRows, err := e.pool().Query(ctx, `SELECT st.gpu_index, st.metric, st.sample_count, min_value, max_value, mean_value,
		median_value, p95_value, p99_value, stddev_value FROM gpu_metric_gpu_stats st
		JOIN gpu_metric_series s ON s.id = st.series_id WHERE s.file_name = 'gpu_metrics.csv'
		AND st.metric IN ('power_w', 'temperature_c') ORDER BY st.gpu_index, st.metric`)
	require.NoError(t, err)
	var stats []stat
	for statRows.Next() {
		var s stat
		require.NoError(t, statRows.Scan(&s.gpu, &s.metric, &s.n, &s.min, &s.max, &s.mean, &s.median, &s.p95, &s.p99, &s.stddev))
		stats = append(stats, s)
	}
	require.NoError(t, statRows.Err())
	f := func(v float64) float32 { return float32(v) }
	require.Equal(t, []stat{
		{0, "power_w", 2, 187.8, 912.1, f((187.8 + 912.1) / 2), f((187.8 + 912.1) / 2), f(187.8 + (912.1-187.8)*0.95), f(187.8 + (912.1-187.8)*0.99), f((912.1 - 187.8) / 2)},
		{0, "temperature_c", 2, 33, 61, 47, 47, f(33 + 28*0.95), f(33 + 28*0.99), 14},
		{1, "power_w", 2, 190.96, 905.3, f((190.96 + 905.3) / 2), f((190.96 + 905.3) / 2), f(190.96 + (905.3-190.96)*0.95), f(190.96 + (905.3-190.96)*0.99), f((905.3 - 190.96) / 2)},
		{1, "temperature_c", 2, 39, 62, 50.5, 50.5, f(39 + 23*0.95), f(39 + 23*0.99), 11.5},
	}, stats)
	// Every metric with a value has a digest row per GPU: 6 nvidia-smi
	// metrics × 2 GPUs; a bundle host has power and gpu_util_pct.
	require.EqualValues(t, 12+2+2, e.count(`SELECT count(*) FROM gpu_metric_gpu_stats`))
	require.EqualValues(t, 0, e.count(`SELECT count(*) FROM gpu_metric_gpu_stats st JOIN gpu_metric_series s ON s.id = st.series_id
		WHERE st.sample_count <> (SELECT count(*) FROM gpu_metric_samples m WHERE m.series_id = st.series_id
			AND m.gpu_index = st.gpu_index AND m.power_w IS NOT NULL)`), "power digests count every stored sample")
	// The bundle's utilization column is stored (samples schema v2).
	require.EqualValues(t, 5, e.count(`SELECT count(*) FROM gpu_metric_samples m JOIN gpu_metric_series s ON s.id = m.series_id
		WHERE s.artifact_name = 'power_audit_p2' AND m.gpu_util_pct IS NOT NULL`))

	tables := []string{"gpu_metric_series", "gpu_metric_samples", "gpu_metric_gpu_stats", "benchmark_result_gpu_metrics"}
	before := e.checksums(tables...)
	again := e.mustIngest(dir, cfg)
	require.Equal(t, schema.Counts{Duplicate: 3}, again.Rows.Power)
	require.Equal(t, before, e.checksums(tables...))
}

// TestPowerBundleVendor: a multinode power bundle's vendor comes from its
// manifest, never from the CSV header alone.
func TestPowerBundleVendor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, manifest, want string
	}{
		{"dme scope", `{"producer": "srt-slurm.dcgm-power", "source_metric": "gpu_power_usage", "power_scope": "gpu_device_power_as_reported_by_amd_device_metrics_exporter"}`, "amd"},
		{"retired power_profile", `{"producer": "srt-slurm.dcgm-power", "power_profile": "amd-device-metrics"}`, "amd"},
		{"amd-smi producer", `{"producer": "srt-slurm.amd-smi-power", "source_metric": "socket_power"}`, "amd"},
		{"rocm source metric", `{"producer": "srt-slurm.power", "source_metric": "rocm_smi_power"}`, "amd"},
		{"dcgm", `{"producer": "srt-slurm.dcgm-power", "source_metric": "DCGM_FI_DEV_POWER_USAGE", "power_scope": "gpu_device_board_as_reported_by_dcgm"}`, "nvidia"},
		{"no manifest", "", "nvidia"},
		{"malformed manifest", `{"producer": "srt-slurm.amd-smi-power",`, "nvidia"},
	}
	e := newEnv(t)
	dir := t.TempDir()
	for i, c := range cases {
		name := "v" + strings.ReplaceAll(c.name, " ", "-")
		perJob(t, dir, name, benchRow(1<<i, nil))
		writeFile(t, filepath.Join(dir, "power_audit_"+name, "LOGS", "power", "samples.csv"), dcgmCSV)
		if c.manifest != "" {
			writeFile(t, filepath.Join(dir, "power_audit_"+name, "LOGS", "power", "manifest.json"), c.manifest)
		}
	}
	e.mustIngest(dir, ingest.Config{Run: RunID(992, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 8, 21, 8, 0, 0, 0, time.UTC)}})
	for _, c := range cases {
		name := "power_audit_v" + strings.ReplaceAll(c.name, " ", "-")
		var vendors []string
		rows, err := e.pool().Query(context.Background(), `SELECT DISTINCT vendor FROM gpu_metric_series WHERE artifact_name = $1`, name)
		require.NoError(t, err)
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			vendors = append(vendors, v)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []string{c.want}, vendors, c.name)
	}
}

// TestCPUSidePowerBestEffort: the CPU-side (Grace) leg of a multinode power
// bundle is read and counted; a broken one is a note, never a failure, and
// a required-power point is not failed by it.
func TestCPUSidePowerBestEffort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	v2 := "schema_version,timestamp_unix,hostname,source,sensor,socket_id,power_w,cpu_rail_w,soc_w,dram_w,total_power_w\n" +
		"2,1787300000.0,node-p,acpi,Grace Power Socket 0,0,251.5,180.25,60.5,,1002.0\n" +
		"2,1787300000.0,node-p,acpi,Grace Power Socket 1,1,248.25,179,61,,1002.0\n" +
		"2,1787300001.0,node-p,acpi,Grace Power Socket 0,0,252.5,181.25,60.5,,1004.0\n" +
		"2,1787300001.0,node-p,acpi,Grace Power Socket 1,1,249.25,180,61,,1004.0\n"
	v1Broken := "schema_version,timestamp_unix,hostname,source,sensor,socket_id,power_w,total_power_w\n" +
		"1,1787300000.0,node-p,acpi,Grace Power Socket 0,0,-5,1002.0\n"
	cpuPoint := powerRow(4, 500, 1, 2, map[string]any{"cpu_power_valid": 1, "avg_total_cpu_power_w": 501.0, "total_cpu_energy_j": 1002.0})
	perJob(t, dir, "c1", cpuPoint)
	writeFile(t, filepath.Join(dir, "power_audit_c1", "LOGS", "power", "samples.csv"), dcgmCSV)
	writeFile(t, filepath.Join(dir, "power_audit_c1", "LOGS", "power", "manifest.json"), `{"schema_version": 1, "producer": "srt-slurm.dcgm-power"}`)
	writeFile(t, filepath.Join(dir, "power_audit_c1", "LOGS", "power", "cpu", "samples.csv"), v2)
	writeFile(t, filepath.Join(dir, "power_audit_c1", "LOGS", "power", "cpu", "cpu_manifest.json"), `{"schema_version": 2, "source": "acpi"}`)
	perJob(t, dir, "c2", powerRow(8, 500, 1, 2, nil))
	writeFile(t, filepath.Join(dir, "power_audit_c2", "LOGS", "power", "samples.csv"), dcgmCSV)
	writeFile(t, filepath.Join(dir, "power_audit_c2", "LOGS", "power", "cpu", "samples.csv"), v1Broken)
	fp := strings.Repeat("ab", 32)
	writeFile(t, filepath.Join(dir, "required-power-sweep-manifest", "sweep_manifest.json"), `{
  "schema-version": 2, "run-id": 993, "run-attempt": 1,
  "points": [
    {"config_key": "c2", "identity": {"recipe_fingerprint": "`+fp+`", "concurrency": 8, "benchmark_type": "single_turn", "isl": 8192, "osl": 1024}}
  ]}`)
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(993, 1), Meta: schema.RunMeta{CreatedAt: time.Date(2026, 8, 21, 8, 0, 0, 0, time.UTC)}})
	require.Equal(t, schema.StatusSucceeded, sum.Status, "%+v", sum.Failures)
	require.Empty(t, sum.Failures)
	require.EqualValues(t, 1, sum.Details.CPUPowerFilesRead)
	require.EqualValues(t, 4, sum.Details.CPUPowerSampleRows)
	require.EqualValues(t, 1, sum.Details.CPUPowerFilesRefused)
	require.Contains(t, sum.Notes, "CPU-side power not read (best effort, the run is not failed): artifact power_audit_c2: file LOGS/power/cpu/samples.csv: line 2: invalid power_w \"-5\"")
	// The producer's CPU-side metrics are stored with the point (where the
	// reference stores them).
	var cpuW float64
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT (metrics->>'avg_total_cpu_power_w')::float8 FROM benchmark_results WHERE conc = 4`).Scan(&cpuW))
	require.Equal(t, 501.0, cpuW)
	// CPU samples are not telemetry series.
	require.EqualValues(t, 4, e.count(`SELECT count(*) FROM gpu_metric_series`))
}
