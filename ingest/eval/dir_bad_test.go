package eval_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/eval"
)

// batchedDir is the batched multinode test directory (eval_concs
// [4, 16, 64], completed [4, 64], failed [16]) as a MapFS.
func batchedDir(t *testing.T) (fstest.MapFS, map[string]any) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", "dirs", "eval_dsr1_8k1k_fp8_dynamo-sglang_*"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir(matches[0])
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(matches[0], e.Name()))
		require.NoError(t, err)
		fsys[e.Name()] = &fstest.MapFile{Data: data}
	}
	var meta map[string]any
	require.NoError(t, json.Unmarshal(fsys["meta_env.json"].Data, &meta))
	return fsys, meta
}

func readMapDir(t *testing.T, fsys fstest.MapFS) eval.DirResult {
	t.Helper()
	files := make([]string, 0, len(fsys))
	for f := range fsys {
		files = append(files, f)
	}
	sort.Strings(files)
	return eval.ReadDir(func(f string) (io.ReadCloser, error) { return fsys.Open(f) }, "eval_x", files)
}

// meta_env.json fields of the wrong type fail the artifact with a reason
// naming the field; a concurrency listed as failed never becomes a row.
func TestReadDirBadMeta(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   map[string]any // fields replaced (nil value: removed)
		reason string         // "" when the directory reads
		concs  []int          // concurrencies of the rows written (not skipped)
	}{
		{"as written", nil, "", []int{4, 64}},
		{"completed as a string", map[string]any{"completed_eval_concs": "4,64"}, `completed_eval_concs: "4,64" is not a list of concurrencies`, nil},
		{"failed as a string", map[string]any{"failed_eval_concs": "16"}, `failed_eval_concs: "16" is not a list of concurrencies`, nil},
		{"eval_concs as a string", map[string]any{"eval_concs": "4 16 64"}, `eval_concs: "4 16 64" is not a list of concurrencies`, nil},
		{"completed with a non-integer", map[string]any{"completed_eval_concs": []any{4, "x"}}, `completed_eval_concs: "x" is not a positive integer`, nil},
		{"completed with zero", map[string]any{"completed_eval_concs": []any{4, 0}}, `completed_eval_concs: 0 is not a positive integer`, nil},
		{"conc both completed and failed", map[string]any{"completed_eval_concs": []any{4, 16, 64}}, "concurrency 16 is listed in both completed_eval_concs and failed_eval_concs", nil},
		{"older writer: no completed list, failed excluded", map[string]any{"completed_eval_concs": nil}, "", []int{4, 64}},
		{"older writer: no lists", map[string]any{"completed_eval_concs": nil, "failed_eval_concs": nil}, "", []int{4, 16, 64}},
		{"tp as a word", map[string]any{"tp": "eight"}, `tp: "eight" is not a non-negative integer`, nil},
		{"decode_ep fractional", map[string]any{"decode_ep": 1.5}, `decode_ep: 1.5 is not a non-negative integer`, nil},
		{"prefill_num_workers negative", map[string]any{"prefill_num_workers": -1}, `prefill_num_workers: -1 is not a non-negative integer`, nil},
		{"tp as a numeric string", map[string]any{"tp": "4"}, "", []int{4, 64}},
		{"is_multinode not a boolean", map[string]any{"is_multinode": "yes"}, `is_multinode: "yes" is not a boolean`, nil},
		{"conc as an object", map[string]any{"conc": map[string]any{}}, `conc: an object is not a non-negative integer`, nil},
		{"conc with a space", map[string]any{"conc": " 16"}, `conc: " 16" is not a non-negative integer`, nil},
		{"tp as 4.0 string", map[string]any{"tp": "4.0"}, `tp: "4.0" is not a non-negative integer`, nil},
		{"tp as hex string", map[string]any{"tp": "0x4"}, `tp: "0x4" is not a non-negative integer`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, meta := batchedDir(t)
			for k, v := range tc.edit {
				if v == nil {
					delete(meta, k)
				} else {
					meta[k] = v
				}
			}
			data, err := json.Marshal(meta)
			require.NoError(t, err)
			fsys["meta_env.json"] = &fstest.MapFile{Data: data}
			res := readMapDir(t, fsys)
			if tc.reason != "" {
				require.Equal(t, []eval.FileFailure{{File: "meta_env.json", Reason: tc.reason}}, res.Failures)
				require.Empty(t, res.Rows)
				return
			}
			require.Empty(t, res.Failures)
			var concs []int
			for _, r := range res.Rows {
				if r.SkipReason == "" {
					concs = append(concs, *r.Conc)
				}
			}
			require.Equal(t, tc.concs, concs)
		})
	}
}

// Results files with bad scores, no task, or names PostgreSQL cannot
// store: the task (or the file) fails with a reason naming the field; the
// other concurrencies still read.
func TestReadDirBadResults(t *testing.T) {
	const conc4 = "results_2026-08-21T15-00-00.000001_conc4.json"
	const conc16 = "results_2026-08-21T15-40-00.000001_conc16.json"
	res := func(results string) string {
		return `{"lm_eval_version": "0.4.9.1", "results": ` + results + `, "n-samples": {"gsm8k": {"effective": 1319}}}`
	}
	gsm := func(metrics string) string { return res(`{"gsm8k": {"alias": "gsm8k", ` + metrics + `}}`) }
	for _, tc := range []struct {
		name    string
		file    string
		data    string
		reason  string   // the failure of the conc4 file ("" none)
		tasks   []string // tasks of conc4 written
		metrics map[string]any
	}{
		{"valid", conc4, gsm(`"exact_match,strict-match": 0.95, "exact_match_stderr,strict-match": "N/A"`), "", []string{"gsm8k"},
			map[string]any{"em_strict": 0.95, "score": 0.95, "score_name": "em_strict", "n_eff": 1319.0}},
		{"score as a string", conc4, gsm(`"exact_match,strict-match": "0.9462"`), `task gsm8k: metric exact_match,strict-match: "0.9462" is a string, not a number`, nil, nil},
		{"score overflows", conc4, gsm(`"exact_match,strict-match": 1e400`), "task gsm8k: metric exact_match,strict-match: 1e400 is not a finite number", nil, nil},
		{"other metric overflows", conc4, gsm(`"exact_match,strict-match": 0.9, "bleu": -1e400`), "task gsm8k: metric bleu: -1e400 is not a finite number", nil, nil},
		{"NaN", conc4, gsm(`"exact_match,strict-match": NaN`), "not an lm-eval results object", nil, nil},
		{"negative accuracy", conc4, gsm(`"acc,none": -0.2`), "task gsm8k: metric acc,none: -0.2 is outside [0, 1]", nil, nil},
		{"exact match above one", conc4, gsm(`"exact_match,strict-match": 95.4`), "task gsm8k: metric exact_match,strict-match: 95.4 is outside [0, 1]", nil, nil},
		{"score null", conc4, gsm(`"exact_match,strict-match": null`), "task gsm8k: metric exact_match,strict-match: null is not a number", nil, nil},
		{"negative stderr", conc4, gsm(`"exact_match,strict-match": 0.9, "exact_match_stderr,strict-match": -0.01`), "task gsm8k: metric exact_match_stderr,strict-match: -0.01 is negative", nil, nil},
		{"stderr as a numeric string", conc4, gsm(`"exact_match,strict-match": 0.9, "exact_match_stderr,strict-match": "0.01"`), `task gsm8k: metric exact_match_stderr,strict-match: "0.01" is a string, not a number`, nil, nil},
		{"bad sample count", conc4, `{"lm_eval_version": "0.4.9.1", "results": {"gsm8k": {"exact_match,strict-match": 0.9}}, "n-samples": {"gsm8k": {"effective": "many"}}}`, `task gsm8k: n-samples effective: "many" is not a non-negative integer`, nil, nil},
		{"more effective than original samples", conc4, `{"lm_eval_version": "0.4.9.1", "results": {"gsm8k": {"exact_match,strict-match": 0.9}}, "n-samples": {"gsm8k": {"original": 1319, "effective": 5000}}}`, `task gsm8k: n-samples effective: 5000 is above the 1319 original samples`, nil, nil},
		{"effective samples beyond any eval", conc4, `{"lm_eval_version": "0.4.9.1", "results": {"gsm8k": {"exact_match,strict-match": 0.9}}, "n-samples": {"gsm8k": {"effective": 2000000000}}}`, `task gsm8k: n-samples effective: 2000000000 is above 10000000 samples`, nil, nil},
		{"effective equal to original", conc4, `{"lm_eval_version": "0.4.9.1", "results": {"gsm8k": {"exact_match,strict-match": 0.9}}, "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}}}`, "", []string{"gsm8k"},
			map[string]any{"em_strict": 0.9, "score": 0.9, "score_name": "em_strict", "n_eff": 1319.0}},
		{"no task", conc4, res(`{}`), "results holds no task", nil, nil},
		{"no results", conc4, `{"lm_eval_version": "0.4.9.1"}`, "results holds no task", nil, nil},
		{"results not an object", conc4, res(`[1]`), "results: not an object of tasks", nil, nil},
		{"task name not UTF-8", conc4, res(`{"gsm8k` + "\xff" + `": {"exact_match,strict-match": 0.9}}`), "field \"results.gsm8k\uFFFD\": invalid UTF-8", nil, nil},
		{"task name with a lone surrogate", conc4, res(`{"gsm8k\ud800": {"exact_match,strict-match": 0.9}}`), `field "results.gsm8k\\ud800": invalid UTF-8`, nil, nil},
		{"metric key with an escaped NUL", conc4, res(`{"gsm8k": {"x\u0000": 0.9}}`), `field "results.gsm8k.x\\u0000": string holds a NUL`, nil, nil},
		{"empty task name", conc4, res(`{" ": {"exact_match,strict-match": 0.9}, "gsm8k": {"exact_match,strict-match": 0.9}}`), `task " ": task name is empty`, []string{"gsm8k"}, nil},
		{"one bad task of two", conc4, res(`{"gsm8k": {"exact_match,strict-match": "x"}, "gpqa": {"exact_match,extract_abcd": 0.5}}`), `task gsm8k: metric exact_match,strict-match: "x" is not a number`, []string{"gpqa"}, nil},
		{"bad score of a failed conc is skipped", conc16, gsm(`"exact_match,strict-match": "0.9462"`), "", []string{"gsm8k"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, _ := batchedDir(t)
			fsys[tc.file] = &fstest.MapFile{Data: []byte(tc.data)}
			res := readMapDir(t, fsys)
			fails := res.Failures
			if tc.reason == "" {
				require.Empty(t, fails)
			} else {
				require.Len(t, fails, 1)
				require.Equal(t, conc4, fails[0].File)
				require.Contains(t, fails[0].Reason, tc.reason)
			}
			var tasks []string
			written := map[int]int{}
			for _, r := range res.Rows {
				if r.SkipReason != "" {
					continue
				}
				written[*r.Conc]++
				if *r.Conc == 4 {
					tasks = append(tasks, r.Task)
					if tc.metrics != nil {
						require.Equal(t, tc.metrics, r.Metrics)
					}
				}
			}
			require.Equal(t, tc.tasks, tasks)
			require.Equal(t, 1, written[64], "the other concurrencies still read")
			require.Zero(t, written[16], "a failed concurrency never becomes a row")
		})
	}
}

// A meta_env.json PostgreSQL could not store (its strings name the
// deployment) fails the artifact instead of resolving a mangled config.
func TestReadDirMetaNotStorable(t *testing.T) {
	for _, tc := range []struct{ name, from, to, reason string }{
		{"invalid UTF-8", `"model": "deepseek-ai/DeepSeek-R1-0528"`, `"model": "deep` + "\xff" + `seek"`, `field "model": invalid UTF-8`},
		{"lone surrogate", `"hw": "gb200"`, `"hw": "gb200\udc00"`, `field "hw": invalid UTF-8`},
		{"escaped NUL", `"framework": "dynamo-sglang"`, `"framework": "dynamo\u0000"`, `field "framework": string holds a NUL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, _ := batchedDir(t)
			meta := string(fsys["meta_env.json"].Data)
			require.Contains(t, meta, tc.from)
			fsys["meta_env.json"] = &fstest.MapFile{Data: []byte(strings.Replace(meta, tc.from, tc.to, 1))}
			res := readMapDir(t, fsys)
			require.Empty(t, res.Rows)
			require.Len(t, res.Failures, 1)
			require.Equal(t, "meta_env.json", res.Failures[0].File)
			require.Contains(t, res.Failures[0].Reason, tc.reason)
		})
	}
}
