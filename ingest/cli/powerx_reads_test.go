package cli_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// powerxQueries reads the `-- powerx:` SQL blocks of
// docs/dashboard-schema.md ("PowerX reads").
func powerxQueries(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/dashboard-schema.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?s)```sql\n-- powerx: ([a-z-]+)[^\n]*\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = m[2]
	}
	require.Len(t, out, 5, "the guide documents five PowerX reads")
	return out
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestPowerXReads: the site's PowerX reads return the demo run's series
// with what the site needs (fixtures/DEMO.md, Telemetry: seven stored
// series, 19272 samples): csv_sha256, the sidecars document with the
// artifact's inventory, a digest row per GPU and metric whose count is
// the GPU's samples (the site's digest-on-read path shows statistics only
// when it read sample_count samples), values equal to the digest of the
// stored samples, a version key and a point revision.
func TestPowerXReads(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	q := powerxQueries(t)
	conn := dashboardConn(t, db)

	series := queryMaps(t, conn, q["run-series"], int64(28485856738))
	require.Len(t, series, 7)
	var ids []int64
	var total int64
	point := int64(0)
	for _, s := range series {
		ids = append(ids, s["id"].(int64))
		total += int64(s["sample_count"].(int32))
		require.Regexp(t, hexSHA256, s["csv_sha256"], s["artifact_name"])
		side := s["sidecars"].(map[string]any)
		inv := side["seriesInventory"].([]any)
		require.Equal(t, []any{map[string]any{"fileName": s["file_name"], "sampleCount": float64(s["sample_count"].(int32))}}, inv)
		require.Contains(t, side, "context")
		require.Contains(t, side, "identity")
		links := s["benchmark_result_ids"].([]any)
		require.NotEmpty(t, links)
		if point == 0 {
			point = links[0].(int64)
		}
	}
	require.EqualValues(t, 19272, total)

	samples := queryMaps(t, conn, q["series-samples"], ids)
	require.Len(t, samples, int(total))
	perGPU := map[[2]int64]int32{}
	for _, r := range samples {
		perGPU[[2]int64{r["series_id"].(int64), int64(r["gpu_index"].(int16))}]++
	}

	stats := queryMaps(t, conn, q["series-stats"], ids)
	powerRows := 0
	for _, r := range stats {
		key := [2]int64{r["series_id"].(int64), int64(r["gpu_index"].(int16))}
		require.LessOrEqual(t, r["sample_count"].(int32), perGPU[key])
		if r["metric"] == "power_w" {
			powerRows++
			require.Equal(t, perGPU[key], r["sample_count"].(int32), "power is in every sample")
		}
	}
	require.Equal(t, len(perGPU), powerRows, "one power digest per GPU of every series")

	// The stored digest is the digest of the stored samples (SQL's own
	// aggregates over the view; percentile_cont interpolates as the
	// reference does).
	var off int
	require.NoError(t, conn.QueryRow(t.Context(), `
		WITH v AS (
			SELECT series_id, gpu_index, count(*) AS n, min(power_w) AS mn, max(power_w) AS mx,
				avg(power_w::float8) AS mean, percentile_cont(0.5) WITHIN GROUP (ORDER BY power_w::float8) AS med,
				percentile_cont(0.95) WITHIN GROUP (ORDER BY power_w::float8) AS p95,
				percentile_cont(0.99) WITHIN GROUP (ORDER BY power_w::float8) AS p99,
				stddev_pop(power_w::float8) AS sd
			FROM gpu_metric_samples WHERE series_id = ANY($1::bigint[]) GROUP BY 1, 2)
		SELECT count(*) FROM v JOIN gpu_metric_gpu_stats st USING (series_id, gpu_index)
		WHERE st.metric = 'power_w' AND NOT (st.sample_count = v.n AND st.min_value = v.mn AND st.max_value = v.mx
			AND abs(st.mean_value - v.mean) <= 1e-4 * abs(v.mean) AND abs(st.median_value - v.med) <= 1e-4 * abs(v.med)
			AND abs(st.p95_value - v.p95) <= 1e-4 * abs(v.p95) AND abs(st.p99_value - v.p99) <= 1e-4 * abs(v.p99)
			AND abs(st.stddev_value - v.sd) <= 1e-4 * (v.sd + 1))`, ids).Scan(&off))
	require.Zero(t, off, "digests that differ from their samples")

	version := queryMaps(t, conn, q["series-version"], ids)
	require.Len(t, version, len(ids))

	rev := queryMaps(t, conn, q["point-revision"], point)
	require.Len(t, rev, 1)
	require.Regexp(t, `^[0-9a-f]{32}$`, rev[0]["revision"])
	var statsVersion int32
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT min(stats_version) FROM gpu_metric_series`).Scan(&statsVersion))
	require.EqualValues(t, 1, statsVersion)
}
