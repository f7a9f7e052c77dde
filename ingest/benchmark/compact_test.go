package benchmark

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func elements(t *testing.T, doc string, shape Shape) []string {
	t.Helper()
	var out []string
	_, err := NewReader().ReadElements(strings.NewReader(doc), shape, func(e *Element) error {
		out = append(out, string(e.Raw))
		return nil
	})
	require.NoError(t, err)
	return out
}

// The same row written with different indentation (a per-job file and the
// aggregate) yields equal raw bytes; strings keep their spaces.
func TestElementRawIsCompact(t *testing.T) {
	row := map[string]any{"hw": "b200 x", "conc": 64, "p99.9_ttft": 4.42, "router": map[string]any{"name": "a b", "v": []any{1, 2}}, "ok": true}
	two, err := json.MarshalIndent(row, "", "  ")
	require.NoError(t, err)
	four, err := json.MarshalIndent([]any{row, row}, "    ", "    ")
	require.NoError(t, err)
	flat, err := json.Marshal(row)
	require.NoError(t, err)

	perJob := elements(t, string(two), ObjectOrArray)
	agg := elements(t, string(four), ArrayOnly)
	require.Len(t, agg, 2)
	require.Equal(t, perJob[0], agg[0])
	require.Equal(t, agg[0], agg[1])
	require.Contains(t, perJob[0], `"b200 x"`)
	require.Contains(t, perJob[0], `"a b"`)
	require.Less(t, len(perJob[0]), len(two))
	var back map[string]any
	require.NoError(t, json.Unmarshal([]byte(perJob[0]), &back))
	var want map[string]any
	require.NoError(t, json.Unmarshal(flat, &want))
	require.Equal(t, want, back)
}

// Compaction never turns invalid JSON into valid JSON.
func TestCompactionKeepsTokensApart(t *testing.T) {
	for _, doc := range []string{`[{"a": tru e}]`, `[{"a": 1 2}]`, `[{"a": 1` + "\n\t" + `2}]`, `[{"a": nu ll}]`, `[{"a": -1 .5}]`} {
		rows, err := ReadRows(strings.NewReader(doc), ArrayOnly, func(_ int, row map[string]any, err error) error {
			require.Error(t, err, doc)
			require.Nil(t, row)
			return nil
		})
		require.NoError(t, err, doc)
		require.Equal(t, 1, rows)
	}
}

// refCompact is the compaction rule, byte by byte: whitespace outside
// strings is dropped, except one space after a number or literal.
func refCompact(doc []byte) []byte {
	var out []byte
	inString, escaped, afterToken, spaced := false, false, false, false
	for _, c := range doc {
		switch {
		case inString:
			out = append(out, c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case isSpace(c):
			if afterToken && !spaced {
				out = append(out, ' ')
				spaced = true
			}
		default:
			out = append(out, c)
			spaced, afterToken = false, isTokenByte(c)
			inString = c == '"'
		}
	}
	return out
}

// FuzzElementRaw checks the compacted bytes of a single-object file against
// the byte-by-byte rule, read whole and one byte at a time.
func FuzzElementRaw(f *testing.F) {
	for _, seed := range []string{
		"{\n  \"a\": 1,\n  \"b\": \"x  y\\\" z\",\n  \"c\": [true , false\t,null ],\n  \"d\": {\"e\": -1.5e3 }\n}\n",
		`{"a":"\\","b":"\\\"","c":  "  "  }`, "{ \"a\" : 1 2 }", "{\"a\":\r\n\t\"b\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		read := func(r io.Reader) (string, string) {
			var raw []string
			_, err := NewReader().ReadElements(r, ObjectOrArray, func(e *Element) error {
				raw = append(raw, string(e.Raw))
				return nil
			})
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			return strings.Join(raw, "\x00"), msg
		}
		whole, werr := read(bytes.NewReader(doc))
		bytewise, berr := read(iotest.OneByteReader(bytes.NewReader(doc)))
		require.Equal(t, werr, berr, "%q", doc)
		require.Equal(t, whole, bytewise, "%q", doc)
		trimmed := bytes.Trim(doc, " \t\r\n")
		// (A NUL after the object reads as the end of the file: the
		// rule is only compared on documents without one.)
		if werr == "" && len(trimmed) > 0 && trimmed[0] == '{' && bytes.IndexByte(doc, 0) < 0 {
			require.Equal(t, string(refCompact(trimmed)), whole, "%q", doc)
		}
	})
}
