package benchmark

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadRows checks that the reader never panics, that rows counts the
// callback calls, that no more rows are delivered than the input has
// top-level elements, and that a valid JSON array is delivered in full.
// The seed corpus lives in testdata/fuzz/FuzzReadRows.
func FuzzReadRows(f *testing.F) {
	f.Add([]byte(`[{"hw": "b200", "conc": 4}, {"x": NaN}, "s", {"s": "]}\"["}]`), false)
	f.Add([]byte(`{"hw": "b200"}`), false)
	f.Add([]byte(`[{"a": 1}`), true)
	n := newTestNormalizer(f)
	f.Fuzz(func(t *testing.T, data []byte, arrayOnly bool) {
		shape := ObjectOrArray
		if arrayOnly {
			shape = ArrayOnly
		}
		calls := 0
		rows, err := ReadRows(bytes.NewReader(data), shape, func(index int, row map[string]any, rowErr error) error {
			if index != calls {
				t.Fatalf("row index %d, want %d", index, calls)
			}
			calls++
			if (row == nil) == (rowErr == nil) {
				t.Fatalf("row %d: exactly one of row and error must be set (row %v, err %v)", index, row, rowErr)
			}
			if row != nil {
				n.Normalize(row) // must not panic either
			}
			return nil
		})
		if rows != calls {
			t.Fatalf("rows = %d, callback calls = %d", rows, calls)
		}
		if max := topLevelElements(data); rows > max {
			t.Fatalf("rows = %d, more than the %d top-level elements", rows, max)
		}
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) == nil && elems != nil {
			if err != nil {
				t.Fatalf("valid array: unexpected error %v", err)
			}
			if rows != len(elems) {
				t.Fatalf("valid array: rows = %d, want %d", rows, len(elems))
			}
		}
	})
}

// topLevelElements bounds the number of elements of a top-level array: the
// commas directly inside it (outside strings and nested containers) plus
// one. A stray '}' cannot close the array; its ']' ends the count. Anything
// that is not an array has one element.
func topLevelElements(data []byte) int {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return 1
	}
	n, depth := 1, 1
	inString, escaped := false, false
	for _, b := range trimmed[1:] {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			depth++
		case b == ']' && depth == 1:
			return n
		case b == ']' || b == '}':
			if depth > 1 {
				depth--
			}
		case b == ',' && depth == 1:
			n++
		}
	}
	return n
}
