package ingest_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// result_schema_version (reference etl/result-schema-version.ts): a
// benchmark row or run-stats entry without it, or stamped 1, is read; any
// other stamp — 2, 0, "1", null, true, 1.5 — is refused, named with
// artifact, file and value, and counted in details.unsupportedSchemaRows.
func TestResultSchemaVersionIsEnforced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "unstamped", benchRow(4, nil))
	perJob(t, dir, "v1", benchRow(8, map[string]any{"result_schema_version": 1}))
	refused := []struct {
		name  string
		value any
		shown string
	}{{"v2", 2, "2"}, {"v0", 0, "0"}, {"string", "1", `"1"`}, {"bool", true, "true"}, {"half", 1.5, "1.5"}}
	for i, r := range refused {
		perJob(t, dir, r.name, benchRow(16<<i, map[string]any{"result_schema_version": r.value}))
	}
	// null cannot be written through benchRow (nil deletes the key).
	writeFile(t, filepath.Join(dir, "bmk_null", "agg_null.json"),
		`{"hw": "b200", "conc": 1024, "model": "Qwen/Qwen3.5-397B-A17B-FP8", "infmax_model_prefix": "qwen3.5",
		  "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "isl": 8192, "osl": 1024, "tp": 8,
		  "tput_per_gpu": 10, "result_schema_version": null}`)
	writeFile(t, filepath.Join(dir, "run-stats", "run_stats.json"), `{
	  "b200": {"result_schema_version": 1, "n_success": 8, "total": 8},
	  "h200": {"n_success": 4, "total": 4},
	  "h100": {"result_schema_version": 2, "n_success": 4, "total": 4},
	  "mi355x": {"result_schema_version": "1", "n_success": 4, "total": 4}}`)

	sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
	require.Equal(t, schema.Counts{New: 2, Failed: 6}, sum.Rows.Benchmark)
	require.Equal(t, int64(8), sum.Details.UnsupportedSchemaRows, "six benchmark rows and two run-stats entries")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM run_stats`))
	require.Equal(t, 0, e.count(`SELECT count(*) FROM run_stats WHERE hardware IN ('h100', 'mi355x')`))
	got := map[string]string{}
	for _, f := range sum.Failures {
		got[f.Artifact+" / "+f.File] = f.Reason
	}
	want := map[string]string{
		"bmk_null / agg_null.json":   "row 0: result_schema_version null is not supported (this ingest reads 1)",
		"run-stats / run_stats.json": "",
	}
	for _, r := range refused {
		want["bmk_"+r.name+" / agg_"+r.name+".json"] = "row 0: result_schema_version " + r.shown + " is not supported (this ingest reads 1)"
	}
	require.Len(t, sum.Failures, 8)
	for k, reason := range want {
		if reason != "" {
			require.Equal(t, reason, got[k], k)
		}
	}
	var runStats []string
	for _, f := range sum.Failures {
		if f.Category == schema.CategoryRun {
			runStats = append(runStats, f.Artifact+" / "+f.File+": "+f.Reason)
		}
	}
	require.Equal(t, []string{
		`run-stats / run_stats.json: cluster "h100": result_schema_version 2 is not supported (this ingest reads 1)`,
		`run-stats / run_stats.json: cluster "mi355x": result_schema_version "1" is not supported (this ingest reads 1)`,
	}, runStats)
}
