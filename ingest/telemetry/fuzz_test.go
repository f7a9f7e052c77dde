package telemetry

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzParse: any bytes either parse into series whose batches hold exactly
// the samples their facts count, or fail with a ParseError; nothing panics
// and nothing leaks.
//
//	go test ./ingest/telemetry -run '^$' -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.csv"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		series, err := Parse(bytes.NewReader(data), Options{Mem: mem, Chunk: 3})
		if err != nil {
			if series != nil {
				t.Fatalf("series with an error: %v", err)
			}
			return
		}
		defer ReleaseAll(series)
		for _, s := range series {
			if s.Rows() != s.Facts.Samples || s.Facts.Samples == 0 {
				t.Fatalf("rows %d, facts %d", s.Rows(), s.Facts.Samples)
			}
		}
	})
}
