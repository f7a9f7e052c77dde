package eval_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferencex/ingest/ingest/eval"
)

// FuzzReadSamples: any input is read to its end without panicking; every
// line is counted once, as good or bad; what a good line stores is valid
// JSON without NUL characters (jsonb cannot hold them).
func FuzzReadSamples(f *testing.F) {
	for _, p := range []string{"real/receipt_samples_gsm8k.jsonl", "samples/bad.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"doc_id": 1, "x": "a\ud800b", "doc": {"q": "\udc00"}}` + "\n" + `{"doc_id": 2, "x": "` + "\xff" + `"}`))
	f.Add([]byte(`{"doc_id": 1, "doc": {"q": "\u0000"}, "resps": [["\u0000"]], "filtered_resps": ["\u0000"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		good := 0
		st, err := eval.ReadSamples(bytes.NewReader(data), func(s *eval.Sample) error {
			good++
			for _, raw := range [][]byte{s.Metrics, s.FilteredResps, s.Data} {
				if raw == nil {
					continue
				}
				if !json.Valid(raw) {
					t.Fatalf("stored JSON is invalid: %q", raw)
				}
				if bytes.Contains(raw, []byte(`\u0000`)) {
					t.Fatalf("stored JSON holds a NUL: %q", raw)
				}
				if !utf8.Valid(raw) {
					t.Fatalf("stored JSON is not valid UTF-8: %q", raw)
				}
			}
			for _, tx := range []*eval.Text{s.Doc, s.Prompt, s.Resps} {
				if tx != nil && bytes.IndexByte([]byte(tx.Content), 0) >= 0 {
					t.Fatalf("text holds a NUL")
				}
				if tx != nil && !utf8.ValidString(tx.Content) {
					t.Fatalf("text is not valid UTF-8: %q", tx.Content)
				}
			}
			for _, p := range []*string{&s.Filter, s.Target, s.Response} {
				if p != nil && (!utf8.ValidString(*p) || strings.IndexByte(*p, 0) >= 0) {
					t.Fatalf("stored text cannot be stored: %q", *p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Good != good || st.Good+st.Bad != st.Lines {
			t.Fatalf("counts do not add up: %+v, %d delivered", st, good)
		}
	})
}
