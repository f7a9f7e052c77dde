package eval_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/eval"
)

// Lines PostgreSQL text/jsonb cannot store (invalid UTF-8, NUL, escaped
// NUL, lone surrogates), lines with a duplicate key (which a decoder would
// resolve silently) and repeated (doc_id, filter) pairs are bad lines:
// counted with a reason naming the line, never handed on. Valid escapes,
// surrogate pairs included, are kept.
func TestReadSamplesBadText(t *testing.T) {
	good := `{"doc_id": 0, "filter": "strict-match", "exact_match": 1}`
	for _, tc := range []struct {
		name   string
		line   string
		reason string // "" when the line is good
	}{
		{"raw invalid bytes in data", `{"doc_id": 1, "extra": "a` + "\xff\xfe" + `b"}`, `line 2: field "extra": invalid UTF-8`},
		{"raw invalid bytes in doc", `{"doc_id": 1, "doc": {"answer": "` + "\xc3\x28" + `"}}`, `line 2: field "doc.answer": invalid UTF-8`},
		{"raw NUL", `{"doc_id": 1, "x": "a` + "\x00" + `b"}`, `line 2: field "x": string holds a NUL`},
		{"escaped NUL in a key", `{"doc_id": 1, "x\u0000k": "v"}`, `line 2: field "x\\u0000k": string holds a NUL`},
		{"escaped NUL in filter", `{"doc_id": 1, "filter": "\u0000strict"}`, `line 2: field "filter": string holds a NUL`},
		{"lone high surrogate", `{"doc_id": 1, "extra": "a\ud800b"}`, `line 2: field "extra": invalid UTF-8`},
		{"high surrogate at the end", `{"doc_id": 1, "extra": "a\uD800"}`, `line 2: field "extra": invalid UTF-8`},
		{"two high surrogates", `{"doc_id": 1, "extra": "\ud800\ud800"}`, `line 2: field "extra": invalid UTF-8`},
		{"lone low surrogate", `{"doc_id": 1, "resps": [["\udc00"]]}`, `line 2: field "resps[0][0]": invalid UTF-8`},
		{"doc_id with a space", `{"doc_id": " 1"}`, `line 2: doc_id: " 1" is not a non-negative integer`},
		{"doc_id 1.5", `{"doc_id": 1.5}`, `line 2: doc_id: 1.5 is not a non-negative integer`},
		{"doc_id -1", `{"doc_id": -1}`, `line 2: doc_id: -1 is not a non-negative integer`},
		{"doc_id 01 string", `{"doc_id": "01"}`, `line 2: doc_id: "01" is not a non-negative integer`},
		{"doc_id decimal string", `{"doc_id": "1"}`, ""},
		{"duplicate key", `{"doc_id": 1, "filter": "a", "doc_id": 2}`, `line 2: duplicate key "doc_id"`},
		{"duplicate nested key", `{"doc_id": 1, "doc": {"q": "a", "q": "b"}}`, `line 2: duplicate key "doc.q"`},
		{"duplicate doc and filter", `{"doc_id": 0, "filter": "strict-match", "exact_match": 0}`, `line 2: duplicate of line 1 (doc_id 0, filter "strict-match")`},
		{"same doc, other filter", `{"doc_id": 0, "filter": "flexible-extract", "exact_match": 1}`, ""},
		{"surrogate pair", `{"doc_id": 1, "extra": "\ud83d\ude00", "doc": {"q": "\u00e9"}}`, ""},
		{"escaped backslash before u0000", `{"doc_id": 1, "extra": "\\u0000"}`, ""},
		{"escaped backslash then a lone surrogate", `{"doc_id": 1, "extra": "\\\udfff"}`, `line 2: field "extra": invalid UTF-8`},
		{"escaped quote then an escaped NUL", `{"doc_id": 1, "extra": "\"\u0000"}`, `line 2: field "extra": string holds a NUL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := good + "\n" + tc.line + "\n" + `{"doc_id": 9}` + "\n"
			var ids []int
			st, err := eval.ReadSamples(strings.NewReader(data), func(s *eval.Sample) error {
				ids = append(ids, s.DocID)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, 3, st.Lines)
			if tc.reason == "" {
				require.Zero(t, st.Bad)
				require.Len(t, ids, 3)
				return
			}
			require.Equal(t, []int{0, 9}, ids, "the bad line is skipped, the others read")
			require.Equal(t, 1, st.Bad)
			require.Contains(t, st.Summary(), tc.reason)
		})
	}
}
