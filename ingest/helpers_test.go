package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

const demoRunID = 28485856738

// fixedNow is the clock of golden tests.
func fixedNow() time.Time { return time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC) }

func benchDeps(tb testing.TB, st *store.Store) ingest.Deps {
	return newDeps(tb, st, zap.NewNop(), time.Now)
}

func newDeps(tb testing.TB, st *store.Store, log *zap.Logger, now func() time.Time) ingest.Deps {
	tb.Helper()
	cat, err := catalog.Default()
	require.NoError(tb, err)
	ov, err := overrides.Load()
	require.NoError(tb, err)
	return ingest.Deps{Store: ingest.AdaptStore[*store.RunTx](st), Catalog: cat, Normalizer: benchmark.NewNormalizer(cat),
		Overrides: ov, Log: log, Now: now}
}

// env is one test's database and collaborators.
type env struct {
	t    *testing.T
	st   *store.Store
	db   *pgxpool.Pool // the test's own queries
	deps ingest.Deps
}

func newEnv(t *testing.T) *env {
	t.Helper()
	url := pgtest.New(t)
	st, err := store.Open(context.Background(), url, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return &env{t: t, st: st, db: pgtest.Pool(t, url), deps: newDeps(t, st, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)), fixedNow)}
}

func (e *env) pool() *pgxpool.Pool { return e.db }

// ingest runs the pipeline on a tree and checks the report invariant.
func (e *env) ingest(dir string, cfg ingest.Config) (*schema.Summary, error) {
	e.t.Helper()
	if cfg.Target == "" {
		cfg.Target = "test"
	}
	if cfg.Run.Repo == "" {
		cfg.Run.Repo = "SemiAnalysisAI/InferenceX"
	}
	tree, err := source.Open(context.Background(), dir, zaptest.NewLogger(e.t))
	require.NoError(e.t, err)
	defer tree.Close()
	sum, err := ingest.Run(context.Background(), cfg, tree, e.deps)
	require.NotNil(e.t, sum)
	if err == nil {
		require.NoError(e.t, report.CheckInvariant(sum))
		require.Equal(e.t, sum.Details.EvalRows, sum.Rows.Eval.Total(), "every eval item lands in exactly one column")
	}
	return sum, err
}

func (e *env) mustIngest(dir string, cfg ingest.Config) *schema.Summary {
	e.t.Helper()
	sum, err := e.ingest(dir, cfg)
	require.NoError(e.t, err)
	return sum
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool().QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// dataTables are every table an ingest writes rows to, except the ledger.
var dataTables = []string{"workflow_runs", "configs", "benchmark_results", "availability", "run_stats",
	"eval_results", "eval_sample_texts", "eval_samples", "changelog_entries",
	"trace_blobs", "trace_blob_chunks", "agentic_trace_replay", "server_logs", "server_log_files", "server_log_texts", "run_datasets", "datasets",
	"gpu_metric_series", "gpu_metric_samples", "benchmark_result_gpu_metrics"}

// checksums is a content checksum per table: every row as text, sorted.
func (e *env) checksums(tables ...string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, tbl := range tables {
		var sum string
		q := "SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), 'empty') FROM " + tbl + " t"
		require.NoError(e.t, e.pool().QueryRow(context.Background(), q).Scan(&sum))
		out[tbl] = sum
	}
	return out
}

// demoTree writes the bundled demo run into a fresh directory.
func demoTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(dir))
	return dir
}

// writeFile writes a file, creating its directory.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

// benchRow is a valid single-node benchmark row at one concurrency.
func benchRow(conc int, extra map[string]any) map[string]any {
	row := map[string]any{
		"hw": "b200", "conc": conc, "image": "lmsysorg/sglang:v0.5.14-cu130", "model": "Qwen/Qwen3.5-397B-A17B-FP8",
		"infmax_model_prefix": "qwen3.5", "framework": "sglang", "precision": "fp8", "spec_decoding": "none",
		"disagg": false, "recipe_fingerprint": strings.Repeat("ab", 32), "isl": 8192, "osl": 1024,
		"is_multinode": false, "tp": 8, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
		"tput_per_gpu": 1000.5 + float64(conc), "median_ttft": 0.5, "mean_tpot": 0.02,
	}
	for k, v := range extra {
		if v == nil {
			delete(row, k)
			continue
		}
		row[k] = v
	}
	return row
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b)
}

// perJob writes bmk_<name>/agg_<name>.json holding one row.
func perJob(t *testing.T, dir, name string, row map[string]any) {
	writeFile(t, filepath.Join(dir, "bmk_"+name, "agg_"+name+".json"), mustJSON(t, row))
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
