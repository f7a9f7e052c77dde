package benchmark

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// Shape says which top-level JSON shapes a benchmark file may have.
type Shape int

const (
	// ObjectOrArray: per-job bmk_* files hold one row object or an array of
	// row objects.
	ObjectOrArray Shape = iota
	// ArrayOnly: aggregate results_* files must hold an array of rows.
	ArrayOnly
)

// maxRowBytes bounds the size of one row so that a corrupt file cannot make
// the reader buffer without limit. Real rows are a few KiB.
const maxRowBytes = 64 << 20

// File-level errors that callers may want to tell apart.
var (
	ErrEmptyFile = errors.New("empty file")
	ErrNotArray  = errors.New("aggregate file is not a JSON array")
)

// RowFunc receives every row of a file in order. index is the row's 0-based
// position; err is set (and row nil) when that row could not be decoded. A
// non-nil return stops the reading and is returned by ReadRows as is.
type RowFunc func(index int, row map[string]any, err error) error

// ReadRows streams the rows of a benchmark file to fn. The top-level array
// is split into elements without loading the whole file, and each element is
// decoded on its own, so one bad element does not
// lose its neighbours: its error is passed to fn. Errors that concern the
// file as a whole (empty, not JSON, wrong shape, truncated, trailing data)
// are returned; rows is always the number of rows delivered to fn.
func ReadRows(r io.Reader, shape Shape, fn RowFunc) (rows int, err error) {
	return NewReader().ReadRows(r, shape, fn)
}

// Reader reads benchmark files, reusing its buffers from one file to the
// next. A Reader is not safe for concurrent use; give each worker its own.
type Reader struct {
	s rowScanner
}

// NewReader returns a Reader with a 64 KiB read buffer.
func NewReader() *Reader {
	return &Reader{s: rowScanner{r: bufio.NewReaderSize(nil, 64<<10)}}
}

// Recycle hands back a row decoded by this reader (Element.Decode) that the
// caller no longer uses, nor anything that holds it: its storage is reused
// for a later row. The values it held (strings, nested objects and arrays)
// are not reused and stay valid.
func (rd *Reader) Recycle(row map[string]any) {
	if row == nil || len(row) > maxSpareKeys {
		return
	}
	clear(row)
	rd.s.dec.spare = row
}

// ReadRows is the package function ReadRows with this reader's buffers.
func (rd *Reader) ReadRows(r io.Reader, shape Shape, fn RowFunc) (rows int, err error) {
	return rd.ReadElements(r, shape, func(e *Element) error {
		row, err := e.Decode()
		return fn(e.Index, row, err)
	})
}

// Element is one top-level row of a benchmark file, split out but not yet
// decoded. Raw is compact: whitespace outside strings is dropped (a single
// space kept between two tokens), so two rows written by the same producer
// with different indentation have equal Raw bytes. Raw is only valid
// during the ElementFunc call.
type Element struct {
	Index int
	Raw   []byte
	dec   *rowDecoder // the reader's, reused from row to row
}

// ElementFunc receives every row of a file in order, undecoded.
type ElementFunc func(e *Element) error

// Decode decodes the element into a row object; errors name the row.
func (e *Element) Decode() (map[string]any, error) {
	if e.dec == nil {
		e.dec = new(rowDecoder)
	}
	return decodeRow(e.dec, e.Index, e.Raw)
}

// ReadElements streams the undecoded rows of a benchmark file to fn, with
// the same file-level checks as ReadRows. A caller that can tell from the
// raw bytes that a row needs no decoding skips its cost.
func (rd *Reader) ReadElements(r io.Reader, shape Shape, fn ElementFunc) (rows int, err error) {
	s := &rd.s
	s.r.Reset(r)
	s.buf = s.buf[:0]
	s.offset, s.bom = 0, false
	first, err := s.skipSpace()
	if err != nil {
		return 0, err
	}
	if first == 0 {
		return 0, ErrEmptyFile
	}
	switch {
	case first == '[':
		return s.readArray(fn)
	case first == '{' && shape == ObjectOrArray:
		return s.readObject(fn)
	case shape == ArrayOnly && startsJSONValue(first):
		return 0, ErrNotArray
	case startsJSONValue(first):
		return 0, fmt.Errorf("file is a JSON %s, not an object or array", scalarKind(first))
	default:
		return 0, fmt.Errorf("not JSON: unexpected character %q at offset %d", first, s.offset-1)
	}
}

func eofAfter(rows int) error {
	if rows == 0 {
		return errors.New("unexpected end of file before row 0")
	}
	return fmt.Errorf("unexpected end of file after row %d", rows-1)
}

// decodeRow decodes one element into a row object. Numbers decode as
// float64 (exact for every value a benchmark row carries; a number beyond
// float64's range fails the row). A duplicate key, a NUL inside a string
// or invalid UTF-8 fails the row (strictjson) instead of being resolved,
// stripped or replaced by the decoder. A plain row takes rowDecoder's one
// pass (rowdecode.go says why it is kept); the strict check and
// encoding/json run only for a row it refuses, and say why.
func decodeRow(d *rowDecoder, index int, elem []byte) (map[string]any, error) {
	trimmed := bytes.Trim(elem, " \t\r\n") // JSON whitespace only: "\f" is not
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("row %d: missing value", index)
	}
	if trimmed[0] != '{' {
		if tok := nonFiniteToken(trimmed); tok != "" {
			return nil, fmt.Errorf("row %d: non-finite number %s is not valid JSON", index, tok)
		}
		if !json.Valid(trimmed) {
			return nil, fmt.Errorf("row %d: invalid JSON", index)
		}
		kind := "array"
		if trimmed[0] != '[' {
			kind = scalarKind(trimmed[0])
		}
		return nil, fmt.Errorf("row %d: not an object (%s)", index, kind)
	}
	if row, ok := d.decodeFast(trimmed); ok {
		return row, nil
	}
	if err := d.chk.Check(trimmed); err != nil {
		return nil, fmt.Errorf("row %d: %w", index, err)
	}
	var row map[string]any
	if err := json.Unmarshal(trimmed, &row); err != nil {
		if tok := nonFiniteToken(trimmed); tok != "" {
			return nil, fmt.Errorf("row %d: non-finite number %s is not valid JSON", index, tok)
		}
		if field, lit := beyondFloat64(trimmed); field != "" {
			return nil, fmt.Errorf("row %d: field %q: number %s does not fit a float64", index, field, lit)
		}
		return nil, fmt.Errorf("row %d: invalid JSON: %w", index, err)
	}
	return row, nil
}

// beyondFloat64 finds the first number in the object data (keys in sorted
// order, depth first) that a float64 cannot hold, and names its field as
// strictjson does ("a.b[2]"): encoding/json names no field for a value of
// a map[string]any.
func beyondFloat64(data []byte) (field, lit string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", ""
	}
	var walk func(path string, v any) (string, string)
	walk = func(path string, v any) (string, string) {
		switch v := v.(type) {
		case json.Number:
			if _, err := strconv.ParseFloat(string(v), 64); err != nil {
				return path, string(v)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if f, l := walk(p, v[k]); f != "" {
					return f, l
				}
			}
		case []any:
			for i, e := range v {
				if f, l := walk(fmt.Sprintf("%s[%d]", path, i), e); f != "" {
					return f, l
				}
			}
		}
		return "", ""
	}
	return walk("", v)
}

// nonFiniteToken finds a bare NaN, Infinity or -Infinity token (as Python's
// json.dump writes them) outside strings.
func nonFiniteToken(elem []byte) string {
	var st scanState // tracks strings the way the scanner does
	for i, b := range elem {
		inString := st.inString
		st.step(b, untilClose)
		if inString || st.inString {
			continue
		}
		for _, tok := range []string{"NaN", "-Infinity", "Infinity"} {
			if bytes.HasPrefix(elem[i:], []byte(tok)) {
				return tok
			}
		}
	}
	return ""
}

func startsJSONValue(b byte) bool {
	switch b {
	case '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return b >= '0' && b <= '9'
}

func scalarKind(first byte) string {
	switch first {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
