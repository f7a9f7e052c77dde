package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/schema"
)

// Run metadata the tree does not carry comes from the caller; a fallback
// never replaces a known value, and a later known value replaces a fallback.
func TestRunMetadataFallbackNeverReplacesKnownValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "p4", benchRow(4, nil))
	run := RunID(777, 1)

	date := func() (string, bool, string) {
		var d, name string
		var fallback bool
		require.NoError(t, e.pool().QueryRow(context.Background(),
			`SELECT to_char(date, 'YYYY-MM-DD'), created_at_is_fallback, name FROM workflow_runs WHERE github_run_id = 777`).Scan(&d, &fallback, &name))
		return d, fallback, name
	}
	rowDate := func() string {
		var d string
		require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT to_char(date, 'YYYY-MM-DD') FROM benchmark_results`).Scan(&d))
		return d
	}

	sum := e.mustIngest(dir, ingest.Config{Run: run})
	require.Contains(t, strings.Join(sum.Notes, "\n"), "run date unknown")
	d, fallback, name := date()
	require.Equal(t, "2026-11-21", d, "the injected clock is the fallback")
	require.True(t, fallback)
	require.Equal(t, "CI Run 777", name)

	known := schema.RunMeta{Name: "Run Sweep", CreatedAt: time.Date(2026, 10, 2, 9, 30, 0, 0, time.UTC), HeadSHA: "abc123", HeadBranch: "main"}
	sum = e.mustIngest(dir, ingest.Config{Run: run, Meta: known})
	require.EqualValues(t, 1, sum.Details.BenchmarkRowsUpdated, "the row's date follows the run's real date")
	d, fallback, name = date()
	require.Equal(t, "2026-10-02", d)
	require.False(t, fallback)
	require.Equal(t, "Run Sweep", name)
	require.Equal(t, "2026-10-02", rowDate())

	// Without metadata again: the known values stay.
	sum = e.mustIngest(dir, ingest.Config{Run: run})
	require.Zero(t, sum.Details.BenchmarkRowsUpdated)
	d, fallback, name = date()
	require.Equal(t, "2026-10-02", d)
	require.False(t, fallback)
	require.Equal(t, "Run Sweep", name)
	var sha, branch string
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT head_sha, head_branch FROM workflow_runs`).Scan(&sha, &branch))
	require.Equal(t, []string{"abc123", "main"}, []string{sha, branch})
}

// A tree whose artifacts.json names another run is refused before anything
// is written.
func TestTreeOfAnotherRunIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sum, err := e.ingest(demoTree(t), ingest.Config{Run: RunID(1234, 1)})
	require.ErrorContains(t, err, "artifacts.json describes run 28485856738, not run 1234")
	require.Equal(t, schema.StatusAborted, sum.Status)
	require.Equal(t, 0, e.count(`SELECT count(*) FROM workflow_runs`))
}

// Purged points are skipped and counted; a purged run writes nothing.
func TestRunOverrides(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	ledger := `{"purgedPoints":[{"runId":28485856738,"attempt":2,"config":{"hardware":"b200","framework":"sglang","model":"qwen3.5",
		"precision":"fp8","spec_method":"none","prefill_tp":8,"prefill_ep":1,"decode_tp":8,"decode_ep":1,
		"num_prefill_gpu":8,"num_decode_gpu":8},"benchmarkType":"single_turn","isl":8192,"osl":1024,"conc":8,
		"offloadMode":"off","recipeFingerprint":"` + demoFingerprint(t, dir) + `","reason":"bad node"}],
		"purgedRunAttempts":[{"runId":99,"attempts":[3],"reason":"cluster outage"}]}`
	ov, err := overrides.Load(overrides.Extension{Data: []byte(ledger)})
	require.NoError(t, err)
	e.deps.Overrides = ov

	sum := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 11, sum.Rows.Benchmark.New, "7 fixed-seq and 4 AgentX points")
	require.EqualValues(t, 2, sum.Stats.PurgedPoints, "the per-job row and its aggregate copy")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 8 AND benchmark_type = 'single_turn'`))

	purged := t.TempDir()
	perJob(t, purged, "p4", benchRow(4, nil))
	sum = e.mustIngest(purged, ingest.Config{Run: RunID(99, 3)})
	require.Equal(t, schema.StatusPurged, sum.Status)
	require.Contains(t, strings.Join(sum.Notes, "\n"), "purged by the run overrides (cluster outage)")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM workflow_runs WHERE github_run_id = 99`))
}

// demoFingerprint reads the recipe fingerprint of the demo's conc 8 row.
func demoFingerprint(t *testing.T, dir string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "bmk_qwen3.5_8k1k_*conc8_*", "*.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	data, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	const key = `"recipe_fingerprint": "`
	i := strings.Index(string(data), key)
	require.GreaterOrEqual(t, i, 0)
	return string(data[i+len(key) : i+len(key)+64])
}

// A legacy row without isl/osl takes the lengths its file name states;
// one that states none is skipped as missing its identity.
func TestLegacyRowLengthsFromNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_legacy", "agg_dsr1_1k8k_run.json"), mustJSON(t, benchRow(4, map[string]any{"isl": nil, "osl": nil})))
	writeFile(t, filepath.Join(dir, "bmk_nameless", "agg.json"), mustJSON(t, benchRow(8, map[string]any{"isl": nil, "osl": nil})))
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(888, 1)})
	require.EqualValues(t, 1, sum.Rows.Benchmark.New)
	require.EqualValues(t, 1, sum.Details.MissingIdentityRows)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE isl = 1024 AND osl = 8192 AND conc = 4`))
}
