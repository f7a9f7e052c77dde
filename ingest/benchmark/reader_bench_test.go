package benchmark

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchAggregate is an aggregate results file of 2000 single-node rows
// shaped like the producer's (about 1.5 KB each).
func benchAggregate(b *testing.B) []byte {
	b.Helper()
	rows := make([]map[string]any, 2000)
	for i := range rows {
		row := map[string]any{
			"hw": "b200", "conc": 4 << (i % 8), "image": "lmsysorg/sglang:v0.5.14-cu130", "model": "Qwen/Qwen3.5-397B-A17B-FP8",
			"infmax_model_prefix": "qwen3.5", "framework": "sglang", "precision": "fp8", "spec_decoding": "none",
			"disagg": false, "recipe_fingerprint": strings.Repeat("ab", 32), "isl": 8192, "osl": 1024,
			"is_multinode": false, "tp": 8, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
		}
		for _, st := range []string{"mean", "median", "p75", "p90", "p95", "p99", "p99.9", "std"} {
			for _, m := range []string{"ttft", "tpot", "itl", "e2el", "intvty"} {
				row[st+"_"+m] = 0.0123456789 * float64(i+1)
			}
		}
		rows[i] = row
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkReadRows(b *testing.B) {
	data := benchAggregate(b)
	rd := NewReader()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n, err := rd.ReadRows(bytes.NewReader(data), ArrayOnly, func(_ int, _ map[string]any, err error) error { return err })
		if err != nil || n != 2000 {
			b.Fatal(n, err)
		}
	}
}

// goldenInputFiles are the golden input files (per-job single-node,
// multinode, agentic v3 and aggregate rows, indented as the producer writes
// them) and their total size.
func goldenInputFiles(b *testing.B) ([][]byte, int) {
	b.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "rows", "*.json"))
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	size := 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".golden.json") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		size += len(data)
	}
	return files, size
}

// benchFiles reads the golden input files with fn per row.
func benchFiles(b *testing.B, fn func(e *Element) error) {
	files, size := goldenInputFiles(b)
	rd := NewReader()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range files {
			if _, err := rd.ReadElements(bytes.NewReader(data), ObjectOrArray, fn); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReadNormalizeFiles reads, decodes and normalizes the golden
// input files, the per-row work of the benchmark stage.
func BenchmarkReadNormalizeFiles(b *testing.B) {
	n := newTestNormalizer(b)
	benchFiles(b, func(e *Element) error {
		row, err := e.Decode()
		if err != nil {
			return err
		}
		if _, o := n.Normalize(row); o.Kind == Failed {
			b.Fatal(o.Reason)
		}
		return nil
	})
}

// BenchmarkReadDecodeFiles reads and decodes the golden input files.
func BenchmarkReadDecodeFiles(b *testing.B) {
	benchFiles(b, func(e *Element) error {
		_, err := e.Decode()
		return err
	})
}

// BenchmarkReadFiles only splits the golden input files into rows.
func BenchmarkReadFiles(b *testing.B) {
	benchFiles(b, func(*Element) error { return nil })
}

// BenchmarkReadElements splits the aggregate file into compacted rows
// without decoding them, as the stage does for rows per-job files cover.
func BenchmarkReadElements(b *testing.B) {
	data := benchAggregate(b)
	rd := NewReader()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n, err := rd.ReadElements(bytes.NewReader(data), ArrayOnly, func(*Element) error { return nil })
		if err != nil || n != 2000 {
			b.Fatal(n, err)
		}
	}
}
