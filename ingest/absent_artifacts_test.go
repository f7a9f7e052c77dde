package ingest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// editListing rewrites the artifacts of a tree's artifacts.json.
func editListing(t *testing.T, dir string, edit func(artifacts []map[string]any) []map[string]any) {
	t.Helper()
	path := filepath.Join(dir, "artifacts.json")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &doc))
	var artifacts []map[string]any
	require.NoError(t, json.Unmarshal(doc["artifacts"], &artifacts))
	artifacts = edit(artifacts)
	doc["artifacts"] = json.RawMessage(mustJSON(t, artifacts))
	writeFile(t, path, mustJSON(t, doc))
}

// removeArtifact deletes an artifact (folder or zip) from a tree.
func removeArtifact(t *testing.T, dir, name string) {
	t.Helper()
	folder, zipped := filepath.Join(dir, name), filepath.Join(dir, name+".zip")
	if _, err := os.Stat(folder); err == nil {
		require.NoError(t, os.RemoveAll(folder))
		return
	}
	require.NoError(t, os.Remove(zipped))
}

// expire marks the listed uploads of the names as expired and removes the
// artifacts from the tree, as GitHub's retention does.
func expire(t *testing.T, dir string, names ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		removeArtifact(t, dir, n)
	}
	editListing(t, dir, func(as []map[string]any) []map[string]any {
		for _, a := range as {
			if want[a["name"].(string)] {
				a["expired"] = true
			}
		}
		return as
	})
}

// demoBenchmarkNames are the benchmark artifacts (bmk_*, results_*) the
// demo lists.
func demoBenchmarkNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	editListing(t, dir, func(as []map[string]any) []map[string]any {
		for _, a := range as {
			n := a["name"].(string)
			if strings.HasPrefix(n, "bmk_") || strings.HasPrefix(n, "results_") {
				names = append(names, n)
			}
		}
		return as
	})
	require.Len(t, names, 17, "fixtures/DEMO.md: 12 per-job, 4 AgentX, results_bmk")
	return names
}

const (
	demoEval      = "eval_dsr1_8k1k_fp8_dynamo-sglang_prefill-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_decode-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-none_conc4x16x64_gb200-nv_1"
	demoMetrics16 = "gpu_metrics_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_b200-cw_00_recipe-341408ee19f26bfd"
	demoMetrics32 = "gpu_metrics_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc32_b200-nb_0_recipe-341408ee19f26bfd"
)

// Listed artifacts the tree lacks are counted and named (issue 12): an
// expired one in a note, a missing one — still downloadable — in a note
// and as a run failure. An older expired upload of an artifact the tree
// holds is neither.
func TestListedArtifactsAbsentFromTheTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	expire(t, dir, demoMetrics16, demoMetrics32)
	removeArtifact(t, dir, demoEval)
	editListing(t, dir, func(as []map[string]any) []map[string]any {
		return append(as, map[string]any{"id": 4867009999, "name": "results_bmk", "created_at": "2026-11-20T07:00:00Z",
			"size_in_bytes": 10, "expired": true})
	})

	for i, want := range []schema.Counts{{New: 12, Skipped: 12, Unmapped: 2, Failed: 1}, {Duplicate: 12, Skipped: 12, Unmapped: 2, Failed: 1}} {
		sum := e.mustIngest(dir, ingest.Config{})
		require.Equal(t, want, sum.Rows.Benchmark, "ingest %d", i+1)
		require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
		require.EqualValues(t, 2, sum.Details.ExpiredArtifacts)
		require.EqualValues(t, 1, sum.Details.MissingArtifacts)
		require.Empty(t, sum.Details.NoBenchmarkData, "the run has benchmark data")
		require.Contains(t, sum.Failures, schema.Failure{Category: schema.CategoryRun, Artifact: demoEval, Reason: "listed in artifacts.json but not in the tree"})
		var runFailures int
		for _, f := range sum.Failures {
			if f.Category == schema.CategoryRun && strings.Contains(f.Reason, "but not in the tree") {
				runFailures++
			}
		}
		require.Equal(t, 1, runFailures)
		require.Contains(t, sum.Notes, "2 listed artifacts have expired on GitHub and could not be read: "+demoMetrics16+", "+demoMetrics32)
		require.Contains(t, sum.Notes, "1 artifact is listed in artifacts.json but not in the tree: "+demoEval)
		text := report.Text(sum)
		require.Contains(t, text, demoEval+": listed in artifacts.json but not in the tree")
		require.True(t, strings.HasPrefix(text, "Ingest report — ⚠️ Results ingested into the test database, with "), text)
	}
	require.Equal(t, 12, e.count(`SELECT count(*) FROM benchmark_results`))
}

// A run that yields no benchmark data at all — none present, all expired,
// all failed — writes the rest, ends completed_with_failures and says so
// in its headline (issue 12). An evals-only run is exempt: it has no
// throughput results by design.
func TestNoBenchmarkData(t *testing.T) {
	t.Parallel()
	onlyPerJob := func(rows ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			for i, body := range rows {
				name := string(rune('a' + i))
				writeFile(t, filepath.Join(dir, "bmk_"+name, "agg_"+name+".json"), body)
			}
			return dir
		}
	}
	tests := []struct {
		name       string
		tree       func(t *testing.T) string
		dryRun     bool
		wantWhy    string
		wantRows   schema.Counts
		wantEvals  int64 // eval rows new
		wantExpire int64
		wantMiss   int64
	}{
		{
			name: "every benchmark artifact expired",
			tree: func(t *testing.T) string {
				dir := demoTree(t)
				expire(t, dir, demoBenchmarkNames(t, dir)...)
				return dir
			},
			wantWhy: "all 17 benchmark artifacts have expired", wantEvals: 3, wantExpire: 17,
		},
		{
			name: "every benchmark artifact expired, dry run",
			tree: func(t *testing.T) string {
				dir := demoTree(t)
				expire(t, dir, demoBenchmarkNames(t, dir)...)
				return dir
			},
			dryRun:  true,
			wantWhy: "all 17 benchmark artifacts have expired", wantEvals: 3, wantExpire: 17,
		},
		{
			name: "expired and missing",
			tree: func(t *testing.T) string {
				dir := demoTree(t)
				names := demoBenchmarkNames(t, dir)
				expire(t, dir, names[1:]...)
				removeArtifact(t, dir, names[0])
				return dir
			},
			wantWhy:   "no benchmark artifact is in the tree (16 expired, 1 listed in artifacts.json but not in the tree)",
			wantEvals: 3, wantExpire: 16, wantMiss: 1,
		},
		{
			name: "no benchmark artifact at all",
			tree: func(t *testing.T) string {
				dir := demoTree(t)
				names := demoBenchmarkNames(t, dir)
				drop := map[string]bool{}
				for _, n := range names {
					drop[n] = true
					removeArtifact(t, dir, n)
				}
				editListing(t, dir, func(as []map[string]any) []map[string]any {
					var keep []map[string]any
					for _, a := range as {
						if !drop[a["name"].(string)] {
							keep = append(keep, a)
						}
					}
					return keep
				})
				return dir
			},
			wantWhy: "the run has no benchmark artifact (bmk_*, results_*)", wantEvals: 3,
		},
		{
			name:     "its only benchmark item failed",
			tree:     onlyPerJob(`{"conc": `),
			wantWhy:  "its only benchmark item failed",
			wantRows: schema.Counts{Failed: 1},
		},
		{
			name: "every item failed or unmapped",
			tree: func(t *testing.T) string {
				return onlyPerJob(`[`, `[`, mustJSON(t, benchRow(4, map[string]any{"hw": "imaginary-gpu-9"})))(t)
			},
			wantWhy:  "none of its 3 benchmark items landed (2 failed, 1 unmapped)",
			wantRows: schema.Counts{Failed: 2, Unmapped: 1},
		},
		{
			name:     "benchmark artifacts without rows",
			tree:     onlyPerJob(`[]`),
			wantWhy:  "its 1 benchmark artifact holds no benchmark rows",
			wantRows: schema.Counts{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			dir := tt.tree(t)
			before := e.checksums(dataTables...)
			sum := e.mustIngest(dir, ingest.Config{Run: RunID(demoRunID, 1), DryRun: tt.dryRun})
			require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
			require.Equal(t, tt.wantWhy, sum.Details.NoBenchmarkData)
			require.Equal(t, tt.wantRows, sum.Rows.Benchmark)
			require.Equal(t, tt.wantEvals, sum.Rows.Eval.New)
			require.Equal(t, tt.wantExpire, sum.Details.ExpiredArtifacts)
			require.Equal(t, tt.wantMiss, sum.Details.MissingArtifacts)
			headline := strings.SplitN(report.Text(sum), "\n", 2)[0]
			if tt.dryRun {
				require.Equal(t, "Ingest report — ⚠️ No benchmark data in this run: "+tt.wantWhy+". Nothing was written (dry run).", headline)
				require.Equal(t, before, e.checksums(dataTables...))
				require.Zero(t, e.count(`SELECT count(*) FROM ingests`))
				return
			}
			hidden := ""
			if sum.Details.NoConclusion {
				hidden = " The dashboard will not show this run: it has no conclusion."
			}
			require.Equal(t, "Ingest report — ⚠️ No benchmark data in this run: "+tt.wantWhy+". The rest was ingested into the test database."+hidden, headline)
			require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results`))
			require.EqualValues(t, tt.wantEvals, e.count(`SELECT count(*) FROM eval_results`))
			require.Equal(t, "completed_with_failures", e.ledgerStatus(sum.IngestID))
			require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs`), "the rest of the run is written")
		})
	}

	t.Run("evals-only run", func(t *testing.T) {
		e := newEnv(t)
		dir, m := evalTree(t, generate.Options{Points: 2, Seed: 17, Evals: 1, EvalDocs: 2})
		writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), `{"base_ref": "a", "head_ref": "b",
			"entries": [{"config-keys": ["dsr1-fp4-b200-sglang"], "description": ["evals only"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/9",
			"evals-only": true, "all-evals": false, "append-only": false}]}`)
		sum := e.mustIngest(dir, ingest.Config{})
		require.Equal(t, schema.Counts{Skipped: int64(m.RawBenchmarkRows)}, sum.Rows.Benchmark)
		require.Empty(t, sum.Details.NoBenchmarkData)
		require.Equal(t, schema.StatusSucceeded, sum.Status)
		require.True(t, strings.HasPrefix(report.Text(sum), "Ingest report — ✅ Results ingested into the test database.\n"))
	})
}

// A valid listing still orders the run: nothing here regresses the
// demo (a sanity check that the stricter parser accepts the real shape).
func TestDemoListingIsValid(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(demoTree(t), "artifacts.json"))
	require.NoError(t, err)
	require.True(t, bytes.Contains(raw, []byte(`"digest"`)))
	e := newEnv(t)
	sum := e.mustIngest(demoTree(t), ingest.Config{DryRun: true})
	require.Equal(t, "listing", sum.Details.AttemptOrder)
	require.Zero(t, sum.Details.ExpiredArtifacts)
	require.Zero(t, sum.Details.MissingArtifacts)
}
