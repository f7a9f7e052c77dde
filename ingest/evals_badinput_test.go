package ingest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// Bad eval input that used to abort the run or land silently — sample
// lines PostgreSQL cannot store (invalid UTF-8, lone surrogate, escaped
// NUL), a repeated (doc_id, filter) line, a score as a string, a
// meta_env.json with a wrong-typed completed_eval_concs and tp, a results
// file without tasks — is reported per artifact and file and counted; the
// rest of the run lands and every count adds up (report.CheckInvariant).
func TestBadEvalInputIsReportedAndTheRestLands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 8, Seed: 21, Evals: 5, EvalDocs: 6})
	dirs, err := filepath.Glob(filepath.Join(dir, "eval_*_conc*"))
	require.NoError(t, err)
	sort.Strings(dirs)
	require.Len(t, dirs, 5)
	one := func(d, pattern string) string {
		files, err := filepath.Glob(filepath.Join(d, pattern))
		require.NoError(t, err)
		require.Len(t, files, 1, "%s in %s", pattern, d)
		return files[0]
	}
	edit := func(path string, fn func(string) string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		out := fn(string(data))
		require.NotEqual(t, string(data), out, "%s unchanged", path)
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	}

	// 0: four bad sample lines among the good ones.
	samples := one(dirs[0], "samples_*.jsonl")
	edit(samples, func(s string) string {
		first := s[:strings.IndexByte(s, '\n')+1]
		return s + `{"doc_id": 90, "filter": "x", "extra": "a` + "\xff\xfe" + `b"}` + "\n" +
			`{"doc_id": 91, "filter": "x", "extra": "a\ud800b"}` + "\n" +
			`{"doc_id": 92, "filter": "x", "x\u0000k": "v"}` + "\n" +
			first // the first line again: the same (doc_id, filter)
	})
	// 1: the score as a string.
	results1 := one(dirs[1], "results_*.json")
	edit(results1, func(s string) string {
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &doc))
		for _, metrics := range doc["results"].(map[string]any) {
			for k, v := range metrics.(map[string]any) {
				if strings.HasPrefix(k, "exact_match,") {
					metrics.(map[string]any)[k] = mustJSON(t, v) // "0.9462"
				}
			}
		}
		return mustJSON(t, doc)
	})
	// 2: completed_eval_concs as a string, tp a word.
	meta2 := one(dirs[2], "meta_env.json")
	edit(meta2, func(s string) string {
		var meta map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &meta))
		meta["completed_eval_concs"], meta["tp"] = "4,64", "eight"
		return mustJSON(t, meta)
	})
	// 3: a results file with no task.
	results3 := one(dirs[3], "results_*.json")
	edit(results3, func(s string) string {
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &doc))
		doc["results"] = map[string]any{}
		return mustJSON(t, doc)
	})

	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	require.Zero(t, sum.Rows.Benchmark.Failed, "the benchmarks land")
	require.Positive(t, sum.Rows.Benchmark.New)
	// Per-config items: 0 and 4 new, 1–3 failed. Aggregate items: 0 and 4
	// duplicates of their per-config rows, 1–3 the first valid description
	// of their keys.
	require.Equal(t, schema.Counts{New: 5, Duplicate: 2, Failed: 3}, sum.Rows.Eval)
	require.EqualValues(t, m.EvalRows, sum.Details.EvalRows)
	require.Equal(t, 5, e.count(`SELECT count(*) FROM eval_results`))
	require.Equal(t, 5, e.count(`SELECT count(*) FROM eval_results WHERE metrics ? 'score'`), "no row lands without its score")
	require.EqualValues(t, 4, sum.Details.EvalSampleLinesFailed)
	require.EqualValues(t, 2*2*6, sum.Stats.EvalSamplesNew, "the good lines of the two per-config rows")
	require.Equal(t, 2*2*6, e.count(`SELECT count(*) FROM eval_samples`))

	type fail struct{ category, artifact, file, reason string }
	var got []fail
	for _, f := range sum.Failures {
		got = append(got, fail{string(f.Category), f.Artifact, f.File, f.Reason})
	}
	sort.Slice(got, func(i, j int) bool { return got[i].artifact < got[j].artifact })
	require.Len(t, got, 4)
	base := filepath.Base
	require.Equal(t, [3]string{string(schema.CategoryEvalSamples), base(dirs[0]), base(samples)}, [3]string{got[0].category, got[0].artifact, got[0].file})
	for _, want := range []string{"4 of 16 sample lines skipped", `line 13: field "extra": invalid UTF-8`, `line 14: field "extra": invalid UTF-8`,
		`line 15: field "x\\u0000k": string holds a NUL`, "line 16: duplicate of line 1 (doc_id 0"} {
		require.Contains(t, got[0].reason, want)
	}
	require.Equal(t, [3]string{string(schema.CategoryEval), base(dirs[1]), base(results1)}, [3]string{got[1].category, got[1].artifact, got[1].file})
	require.Regexp(t, `^task gsm8k: metric exact_match,flexible-extract: "0\.\d+" is a string, not a number$`, got[1].reason)
	require.Equal(t, fail{string(schema.CategoryEval), base(dirs[2]), "meta_env.json", `tp: "eight" is not a non-negative integer`}, got[2])
	require.Equal(t, fail{string(schema.CategoryEval), base(dirs[3]), base(results3), "results holds no task"}, got[3])

	// The rerun changes nothing and reports the same failures.
	before := e.checksums(dataTables...)
	again := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, sum.Failures, again.Failures)
	require.Equal(t, schema.Counts{Duplicate: 7, Failed: 3}, again.Rows.Eval)
	require.Zero(t, again.Stats.EvalSamplesNew)
	require.Equal(t, before, e.checksums(dataTables...))
}
