package eval_test

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/eval"
	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares v, as indented JSON, with testdata/golden/<name>.json.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s differs; run with -update and review the diff", path)
}

func normalizer(t *testing.T) *benchmark.Normalizer {
	t.Helper()
	cat, err := catalog.Default()
	require.NoError(t, err)
	return benchmark.NewNormalizer(cat)
}

// rowView is a Row with its deployment resolved the way the ingest does.
type rowView struct {
	Task          string         `json:"task"`
	ISL           *int           `json:"isl"`
	OSL           *int           `json:"osl"`
	Conc          *int           `json:"conc"`
	LMEvalVersion *string        `json:"lmEvalVersion"`
	Metrics       map[string]any `json:"metrics"`
	File          string         `json:"file"`
	Index         int            `json:"index"`
	SamplesFile   string         `json:"samplesFile,omitempty"`
	SkipReason    string         `json:"skipReason,omitempty"`
	Config        *schema.Config `json:"config,omitempty"`
	Unresolved    any            `json:"unresolved,omitempty"`
}

func view(t *testing.T, n *benchmark.Normalizer, r eval.Row) rowView {
	v := rowView{Task: r.Task, ISL: r.ISL, OSL: r.OSL, Conc: r.Conc, LMEvalVersion: r.LMEvalVersion, Metrics: r.Metrics,
		File: r.File, Index: r.Index, SamplesFile: r.SamplesFile, SkipReason: r.SkipReason}
	cfg, out := n.ResolveConfig(r.Identity, r.Agentic)
	if out.Kind == benchmark.OK {
		v.Config = &cfg
	} else {
		v.Unresolved = out
	}
	return v
}

func dirOpener(root string) eval.Opener {
	fsys := os.DirFS(root)
	return func(file string) (io.ReadCloser, error) { return fsys.Open(file) }
}

func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	require.NoError(t, fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	return files
}

// Every eval shape: legacy single node (HEAD metadata with clobbered ep and
// dp_attention, an older superseded results file, samples), batched
// multinode (completed_eval_concs, a re-run concurrency), SWE-bench
// (AgentX, isl/osl 0), several tasks (gpqa's extract filter, accuracy, a
// task without metrics), a nested directory, and broken ones.
func TestReadDirGolden(t *testing.T) {
	n := normalizer(t)
	entries, err := os.ReadDir(filepath.Join("testdata", "dirs"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			root := filepath.Join("testdata", "dirs", e.Name())
			res := eval.ReadDir(dirOpener(root), e.Name(), listFiles(t, root))
			out := struct {
				Rows      []rowView          `json:"rows"`
				Failures  []eval.FileFailure `json:"failures"`
				FilesRead []string           `json:"filesRead"`
			}{Rows: []rowView{}, Failures: res.Failures, FilesRead: res.FilesRead}
			for _, r := range res.Rows {
				out.Rows = append(out.Rows, view(t, n, r))
			}
			name := e.Name()
			if len(name) > 60 {
				name = name[:60]
			}
			golden(t, "dir_"+name, out)
		})
	}
}

// The aggregate rows of real files: the newer receipt fixture (num_gpus,
// disagg, zero workers) and 66 real supplemental rows (older source names).
func TestReadAggregateGolden(t *testing.T) {
	n := normalizer(t)
	for _, file := range []string{"receipt_agg.json", "supplemental-evals.json"} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "real", file))
			require.NoError(t, err)
			defer f.Close()
			var rows []rowView
			var bad []string
			err = eval.ReadAggregate(f, file, func(r eval.Row) { rows = append(rows, view(t, n, r)) },
				func(b eval.BadRow) { bad = append(bad, b.Reason) })
			require.NoError(t, err)
			golden(t, "aggregate_"+strings.TrimSuffix(file, ".json"), map[string]any{"rows": rows, "bad": bad})
		})
	}
}

// Aggregate files that are not arrays of rows fail as a whole; bad
// elements fail alone.
func TestReadAggregateErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		rows, bad  int
		err        string
	}{
		{"empty", "", 0, 0, "empty file"},
		{"object", `{"task": "gsm8k"}`, 0, 0, "not a JSON array"},
		{"truncated", `[{"task": "gsm8k", "hw": "b200", "em_strict": 0.9}, {"task": "gs`, 1, 0, "element 1"},
		{"bad elements", `[1, {"hw": "b200"}, {"task": "gsm8k", "conc": -4, "em_strict": 0.9}, {"task": "gsm8k", "em_strict": "x"}, {"task": "GSM8K", "em_strict": 0.9}]`, 1, 4, ""},
		{"no metrics", `[{"task": "gsm8k", "hw": "b200"}]`, 1, 0, ""},
		{"not storable", `[{"task": "gsm8k` + "\xff" + `", "em_strict": 0.9}, {"task": "gsm8k\ud800", "em_strict": 0.9}, {"task": "gsm8k", "hw": "b\u0000", "em_strict": 0.9}, {"task": "gsm8k", "em_strict": 0.9}]`, 1, 3, ""},
		{"bad scores", `[{"task": "gsm8k", "em_strict": "0.9462"}, {"task": "gsm8k", "em_strict": 1e400}, {"task": "gsm8k", "score": -0.1}, {"task": "gsm8k", "em_flexible": 1.5}, {"task": "gsm8k", "em_strict_se": -0.01}, {"task": "gsm8k", "em_strict": 1, "n_eff": 1319}]`, 1, 5, ""},
		{"bad topology", `[{"task": "gsm8k", "tp": "eight", "em_strict": 0.9}, {"task": "gsm8k", "decode_num_workers": -2, "em_strict": 0.9}]`, 0, 2, ""},
		{"infrastructure failures", `[{"task": "minimax_m3_full", "em_strict": null, "n_eff": 0, "infrastructure_success": false, "integration_error": {"type": "TimeoutError", "message": "m"}}, {"task": "gsm8k", "em_strict": 0, "infrastructure_success": false}, {"task": "gsm8k", "em_strict": 0.9, "infrastructure_success": true, "integration_error": null}]`, 1, 2, ""},
		{"trailing data", `[] []`, 0, 0, "data after the array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows []eval.Row
			bad := 0
			err := eval.ReadAggregate(strings.NewReader(tc.data), "agg.json", func(r eval.Row) { rows = append(rows, r) },
				func(eval.BadRow) { bad++ })
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
			require.Len(t, rows, tc.rows)
			require.Equal(t, tc.bad, bad)
		})
	}
}

// TestReadAggregateSampleCounts: n_eff is a count of samples — a
// non-negative integer no eval exceeds (10,000,000) — else the row fails
// naming it (supplemental eval files are read as aggregates).
func TestReadAggregateSampleCounts(t *testing.T) {
	for _, tc := range []struct{ neff, reason string }{
		{"1e30", "row 0: n_eff: 1e30 is above 10000000 samples"},
		{"10000001", "row 0: n_eff: 10000001 is above 10000000 samples"},
		{"12.5", "row 0: n_eff: 12.5 is not an integer"},
		{"-1", "row 0: n_eff: -1 is negative"},
		{"10000000", ""},
		{"1319", ""},
	} {
		t.Run(tc.neff, func(t *testing.T) {
			var rows []eval.Row
			var bad []string
			err := eval.ReadAggregate(strings.NewReader(`[{"task": "gsm8k", "em_strict": 0.9, "n_eff": `+tc.neff+`}]`), "agg.json",
				func(r eval.Row) { rows = append(rows, r) }, func(b eval.BadRow) { bad = append(bad, b.Reason) })
			require.NoError(t, err)
			if tc.reason != "" {
				require.Equal(t, []string{tc.reason}, bad)
				require.Empty(t, rows)
				return
			}
			require.Empty(t, bad)
			require.Len(t, rows, 1)
		})
	}
}

// sampleView shows a parsed sample, texts by digest and size.
type sampleView struct {
	DocID         int             `json:"docId"`
	Filter        string          `json:"filter"`
	Line          int             `json:"line"`
	Doc           string          `json:"doc,omitempty"`
	Prompt        string          `json:"prompt,omitempty"`
	Resps         string          `json:"resps,omitempty"`
	Target        *string         `json:"target"`
	Response      *string         `json:"response"`
	Score         *float64        `json:"score"`
	Passed        *bool           `json:"passed"`
	Metrics       json.RawMessage `json:"metrics,omitempty"`
	FilteredResps json.RawMessage `json:"filteredResps,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
}

func textView(tx *eval.Text) string {
	if tx == nil {
		return ""
	}
	c := tx.Content
	if len(c) > 60 {
		c = c[:60] + "…"
	}
	return tx.Kind + " " + hex.EncodeToString(tx.Digest[:6]) + " " + c
}

// Sample lines: the real receipt fixture (one line per document and
// filter, both kept), the full lm-eval shape, and every kind of bad line.
func TestReadSamplesGolden(t *testing.T) {
	for _, file := range []string{
		"real/receipt_samples_gsm8k.jsonl",
		"dirs/eval_dsr1_8k1k_dsr1_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpatrue_disagg-false_spec-mtp_conc64_b200-dgxc_03/samples_gsm8k_2026-08-21T15-00-00.000001.jsonl",
		"samples/bad.jsonl",
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", file))
			require.NoError(t, err)
			defer f.Close()
			samples := []sampleView{}
			st, err := eval.ReadSamples(f, func(s *eval.Sample) error {
				samples = append(samples, sampleView{DocID: s.DocID, Filter: s.Filter, Line: s.Line, Doc: textView(s.Doc),
					Prompt: textView(s.Prompt), Resps: textView(s.Resps), Target: s.Target, Response: s.Response,
					Score: s.Score, Passed: s.Passed, Metrics: s.Metrics, FilteredResps: s.FilteredResps, Data: s.Data})
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, st.Good, len(samples))
			require.Equal(t, st.Lines, st.Good+st.Bad)
			name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
			if strings.HasPrefix(name, "samples_gsm8k_") {
				name = "full_shape"
			}
			golden(t, "samples_"+name, map[string]any{"samples": samples, "stats": st, "summary": summaryOf(st)})
		})
	}
}

func summaryOf(st eval.SampleStats) string {
	if st.Bad == 0 {
		return ""
	}
	return st.Summary()
}

// A line longer than the limit is skipped without being buffered, and the
// next line still reads.
func TestReadSamplesLongLine(t *testing.T) {
	long := `{"doc_id": 1, "x": "` + strings.Repeat("a", eval.MaxSampleLine) + `"}`
	data := `{"doc_id": 0}` + "\n" + long + "\n" + `{"doc_id": 2}` + "\n"
	var ids []int
	st, err := eval.ReadSamples(strings.NewReader(data), func(s *eval.Sample) error { ids = append(ids, s.DocID); return nil })
	require.NoError(t, err)
	require.Equal(t, []int{0, 2}, ids)
	require.Equal(t, 1, st.Bad)
	require.Contains(t, st.Summary(), "line 2: line is longer than")
}

// isMetricKey matches the reference's /^(?:exact_match|score|acc|…)\b/i.
func TestSampleMetricKeys(t *testing.T) {
	data := `{"doc_id": 0, "exact_match": 1, "Exact_Match,strict-match": 1, "acc_norm": 0.5, "acc": 1, "f1": 0.3, ` +
		`"pass@1": 1, "em": 1, "emphasis": 2, "accuracy": 3, "scorer": 4, "score": 0.9, "bleu-4": 0.1}`
	var got []byte
	_, err := eval.ReadSamples(strings.NewReader(data), func(s *eval.Sample) error { got = s.Metrics; return nil })
	require.NoError(t, err)
	require.JSONEq(t, `{"exact_match": 1, "Exact_Match,strict-match": 1, "acc": 1, "f1": 0.3, "pass@1": 1, "em": 1,
		"score": 0.9, "bleu-4": 0.1}`, string(got))
}
