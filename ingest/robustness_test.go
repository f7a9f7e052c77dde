package ingest_test

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// An ingest cancelled while it streams rows leaves every data table as it
// was; the ledger records the aborted attempt.
func TestCancelledIngestLeavesDatabaseUnchanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	_, err := generate.Write(dir, generate.Options{Points: 300, Seed: 3})
	require.NoError(t, err)
	// Something is already in the database, and must stay exactly so.
	e.mustIngest(demoTree(t), ingest.Config{})
	before := e.checksums(dataTables...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files := 0
	var mu sync.Mutex
	log := zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel), zaptest.WrapOptions(zap.Hooks(func(en zapcore.Entry) error {
		if en.Message == "benchmark file" {
			mu.Lock()
			files++
			if files == 100 { // midway through the run's per-job files
				cancel()
			}
			mu.Unlock()
		}
		return nil
	})))
	deps := e.deps
	deps.Log = log
	tree, err := source.Open(context.Background(), dir, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer tree.Close()
	sum, err := ingest.Run(ctx, ingest.Config{Target: "test"}, tree, deps)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, schema.StatusAborted, sum.Status)
	require.Contains(t, sum.AbortReason, "context canceled")
	require.Equal(t, schema.Rows{}, sum.Rows, "nothing was written, so nothing is counted")
	require.Equal(t, before, e.checksums(dataTables...))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM ingests WHERE status = 'aborted' AND id = $1`, sum.IngestID))
}

// Two ingests of the same run at once produce one set of rows: the second
// waits for the first and reports duplicates.
func TestConcurrentIngestsOfOneRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	m, err := generate.Write(dir, generate.Options{Points: 200, Seed: 5})
	require.NoError(t, err)
	sums := make([]*schema.Summary, 2)
	var wg sync.WaitGroup
	for i := range sums {
		wg.Go(func() {
			tree, err := source.Open(context.Background(), dir, zap.NewNop())
			if err != nil {
				t.Error(err)
				return
			}
			defer tree.Close()
			sums[i], err = ingest.Run(context.Background(), ingest.Config{Target: "test"}, tree, e.deps)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	require.NotNil(t, sums[0])
	require.NotNil(t, sums[1])
	news := []int64{sums[0].Rows.Benchmark.New, sums[1].Rows.Benchmark.New}
	dups := []int64{sums[0].Rows.Benchmark.Duplicate, sums[1].Rows.Benchmark.Duplicate}
	require.ElementsMatch(t, []int64{int64(m.Points), 0}, news)
	require.ElementsMatch(t, []int64{0, int64(m.Points)}, dups)
	require.Equal(t, m.Points, e.count(`SELECT count(*) FROM benchmark_results`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs`))
}

// A generated run lands exactly as its manifest says, retries included.
func TestGeneratedRunMatchesManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, opts := range []generate.Options{
		{Points: 120, Seed: 7, Retries: 6},
		{Points: 40, Seed: 8, Retries: 3, Zip: true, RunID: 111},
	} {
		dir := t.TempDir()
		m, err := generate.Write(dir, opts)
		require.NoError(t, err)
		sum := e.mustIngest(dir, ingest.Config{})
		require.Equal(t, schema.Counts{New: int64(m.Points), Skipped: int64(m.AggregateRows + m.StaleRows)}, sum.Rows.Benchmark)
		require.EqualValues(t, m.BenchmarkFiles, sum.Stats.BenchmarkFiles)
		require.EqualValues(t, m.RawBenchmarkRows, sum.Stats.RawBenchmarkRows)
		require.EqualValues(t, m.AggregateRows, sum.Stats.CoveredByPerJobFiles)
		require.EqualValues(t, m.StaleRows, sum.Details.StaleAttemptRows)
		require.Equal(t, schema.StatusSucceeded, sum.Status)
	}
}

// Without artifacts.json, retries are ordered by the files' modification
// times, and the report says so.
func TestAttemptOrderInferredWithoutListing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "artifacts.json")))
	old := "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc64_b200-dgxc_03_recipe-341408ee19f26bfd"
	setModTime(t, filepath.Join(dir, old), "2026-11-20T08:33:00Z")
	setModTime(t, filepath.Join(dir, conc64Winner), "2026-11-20T10:18:00Z")

	sum := e.mustIngest(dir, ingest.Config{Run: RunID(demoRunID, 2)})
	require.Equal(t, "inferred", sum.Details.AttemptOrder)
	require.Contains(t, strings.Join(sum.Notes, "\n"), "attempt order was inferred")
	var artifact string
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT source_artifact FROM benchmark_results WHERE conc = 64`).Scan(&artifact))
	require.Equal(t, conc64Winner, artifact)

	// Flip the times: now the other copy is the newer one.
	e2 := newEnv(t)
	setModTime(t, filepath.Join(dir, old), "2026-11-20T11:00:00Z")
	e2.mustIngest(dir, ingest.Config{Run: RunID(demoRunID, 2)})
	require.NoError(t, e2.pool().QueryRow(context.Background(), `SELECT source_artifact FROM benchmark_results WHERE conc = 64`).Scan(&artifact))
	require.Equal(t, old, artifact)
}

// RunID is shorthand for a Config run identity.
func RunID(id int64, attempt int) schema.RunIdentity {
	return schema.RunIdentity{Repo: "SemiAnalysisAI/InferenceX", SourceRunID: id, SourceRunAttempt: attempt}
}

func setModTime(t *testing.T, dir, at string) {
	t.Helper()
	when, err := parseTime(at)
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, en := range entries {
		require.NoError(t, os.Chtimes(filepath.Join(dir, en.Name()), when, when))
	}
}

// Bad input is reported as failed with its artifact, file and reason; the
// rest of the run still lands.
func TestBadInputIsReportedAndTheRestLands(t *testing.T) {
	t.Parallel()
	good := func(t *testing.T, dir string) {
		perJob(t, dir, "good4", benchRow(4, nil))
		perJob(t, dir, "good8", benchRow(8, nil))
	}
	cases := []struct {
		name     string
		build    func(t *testing.T, dir string)
		artifact string
		file     string
		reason   string
		new      int64
	}{
		{"malformed JSON", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), `{"hw": "b200", "conc": `)
		}, "bmk_bad", "agg_bad.json", "unexpected end of file", 2},
		{"non-array aggregate", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), mustJSON(t, benchRow(16, nil)))
		}, "results_bmk", "agg_bmk.json", "not a JSON array", 2},
		{"rows that are not objects", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), `[1, `+mustJSON(t, benchRow(16, nil))+`]`)
		}, "results_bmk", "agg_bmk.json", "row 0: not an object (number)", 3},
		{"NaN", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "bmk_nan", "agg_nan.json"), `{"hw": "b200", "conc": 16, "tput_per_gpu": NaN}`)
		}, "bmk_nan", "agg_nan.json", "non-finite number NaN", 2},
		{"Infinity in a metric string", func(t *testing.T, dir string) {
			perJob(t, dir, "inf", benchRow(16, map[string]any{"tput_per_gpu": "Infinity"}))
		}, "bmk_inf", "agg_inf.json", "tput_per_gpu: non-finite", 2},
		{"negative concurrency", func(t *testing.T, dir string) {
			perJob(t, dir, "neg", benchRow(-4, nil))
		}, "bmk_neg", "agg_neg.json", "conc", 2},
		{"missing concurrency", func(t *testing.T, dir string) {
			perJob(t, dir, "noconc", benchRow(16, map[string]any{"conc": nil}))
		}, "bmk_noconc", "agg_noconc.json", "conc", 2},
		{"empty file", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "bmk_empty", "agg_empty.json"), "")
		}, "bmk_empty", "agg_empty.json", "empty file", 2},
		{"truncated zip", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "bmk_zip.zip")
			writeZip(t, path, map[string]string{"agg_zip.json": mustJSON(t, benchRow(16, nil))})
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o644))
		}, "bmk_zip", "", "zip", 2},
		{"zip entry escaping its root", func(t *testing.T, dir string) {
			writeZip(t, filepath.Join(dir, "bmk_evil.zip"), map[string]string{
				"../evil.json": mustJSON(t, benchRow(32, nil)),
				"agg_ok.json":  mustJSON(t, benchRow(16, nil)),
			})
		}, "bmk_evil", "../evil.json", "..", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			good(t, dir)
			c.build(t, dir)
			sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
			require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
			require.EqualValues(t, c.new, sum.Rows.Benchmark.New, "everything else lands")
			require.GreaterOrEqual(t, sum.Rows.Benchmark.Failed, int64(1))
			require.Equal(t, int(c.new), e.count(`SELECT count(*) FROM benchmark_results`))
			var found bool
			for _, f := range sum.Failures {
				if f.Artifact == c.artifact && strings.Contains(f.File, c.file) && strings.Contains(f.Reason, c.reason) {
					found = true
				}
			}
			require.True(t, found, "no failure %s / %s: …%s… in %+v", c.artifact, c.file, c.reason, sum.Failures)
		})
	}
}

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for name, body := range files {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// Artifacts of kinds this ingest does not read yet (logs, traces,
// telemetry) sit beside the benchmark artifacts in a real run:
// they are neither read nor reported, even when one is a broken zip.
func TestOtherArtifactKindsAreLeftAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	m, err := generate.Write(dir, generate.Options{Points: 10, Seed: 9})
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "server_logs_x", "server.log"), "INFO max_total_num_tokens=123\n")
	writeFile(t, filepath.Join(dir, "agentic_x", "aiperf_artifacts", "profile_export.jsonl"), "{}\n")
	writeFile(t, filepath.Join(dir, "gpu_metrics_x.zip"), "not a zip at all")

	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusSucceeded, sum.Status)
	require.Empty(t, sum.Failures)
	require.EqualValues(t, m.Points, sum.Rows.Benchmark.New)
	require.EqualValues(t, m.Artifacts, sum.Details.ArtifactsRead, "the benchmark artifacts and run-stats only")
}
