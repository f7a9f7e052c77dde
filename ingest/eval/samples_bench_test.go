package eval_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferencex/ingest/ingest/eval"
)

// benchSamples is an lm-eval samples file of 2000 lines shaped like the
// real ones: a few-shot prompt of a few KB, the model's response, hashes.
func benchSamples(b *testing.B) []byte {
	b.Helper()
	prompt := strings.Repeat("Question: what is 17 × 23? Let us think step by step — 17 × 20 = 340, 17 × 3 = 51. ", 40)
	var buf bytes.Buffer
	for i := 0; i < 2000; i++ {
		line, err := json.Marshal(map[string]any{
			"doc_id": i, "doc": map[string]any{"question": prompt[:1000], "answer": "391"},
			"target": "391", "arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": prompt, "arg_1": map[string]any{"until": []string{"</s>"}}}},
			"resps": [][]string{{prompt[:2000]}}, "filtered_resps": []string{"391"}, "filter": "strict-match",
			"metrics": []string{"exact_match"}, "doc_hash": "ab12", "prompt_hash": "cd34", "target_hash": "ef56", "exact_match": 1.0,
		})
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func BenchmarkReadSamples(b *testing.B) {
	data := benchSamples(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := eval.ReadSamples(bytes.NewReader(data), func(*eval.Sample) error { return nil })
		if err != nil || st.Good != 2000 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// BenchmarkSampleReaderFiles reads 200 small samples files of 10 lines
// with one reader, as a sample worker reads the files of many evals.
func BenchmarkSampleReaderFiles(b *testing.B) {
	data := benchSamples(b)
	var files [][]byte
	for rest := data; len(files) < 200; {
		end := 0
		for n := 0; n < 10; n++ {
			end += bytes.IndexByte(rest[end:], '\n') + 1
		}
		files = append(files, rest[:end])
		rest = rest[end:]
	}
	rd := eval.NewSampleReader()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			st, err := rd.ReadSamples(bytes.NewReader(f), func(*eval.Sample) error { return nil })
			if err != nil || st.Good != 10 {
				b.Fatalf("%+v %v", st, err)
			}
		}
	}
}
