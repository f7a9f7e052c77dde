package eval_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
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
