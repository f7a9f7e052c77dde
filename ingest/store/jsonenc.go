package store

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// encodeMetrics writes a metrics map as a JSON object with sorted keys.
// Metrics hold float64 numbers and a few strings; this avoids
// encoding/json's reflection, which dominated the cost of staging a row.
// Other value types fall back to encoding/json. NUL characters, which
// PostgreSQL's jsonb rejects, are dropped from keys and strings.
func encodeMetrics(buf []byte, m map[string]any) ([]byte, error) {
	var e metricsEncoder
	return e.encode(buf, m)
}

// metricsEncoder is encodeMetrics for a stream of rows: it keeps the sorted
// keys of the last map, which the next one (rows of a run share their
// metric names) reuses after a lookup per key instead of sorting again.
type metricsEncoder struct {
	keys []string
}

// sortedKeys returns m's keys in sorted order; the slice is reused.
func (e *metricsEncoder) sortedKeys(m map[string]any) []string {
	if len(e.keys) == len(m) && len(m) > 0 {
		same := true
		for _, k := range e.keys {
			if _, ok := m[k]; !ok {
				same = false
				break
			}
		}
		if same { // as many distinct keys, all of them in m: the same set
			return e.keys
		}
	}
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	return e.keys
}

func (e *metricsEncoder) encode(buf []byte, m map[string]any) ([]byte, error) {
	keys := e.sortedKeys(m)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		switch v := m[k].(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				buf = append(buf, "null"...)
				continue
			}
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		case string:
			buf = appendJSONString(buf, v)
		default:
			enc, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			buf = append(buf, sanitizeJSON(enc)...)
		}
	}
	return append(buf, '}'), nil
}

// appendJSONString appends s as a JSON string literal, dropping NULs and
// replacing invalid UTF-8.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0:
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// sanitizeJSON removes NUL characters from every string of a JSON
// document, which jsonb cannot store. Documents without one are returned
// as they are.
func sanitizeJSON(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	out, err := json.Marshal(stripNUL(v))
	if err != nil {
		return raw
	}
	return out
}

func stripNUL(v any) any {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, "\x00", "")
	case []any:
		for i := range t {
			t[i] = stripNUL(t[i])
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[strings.ReplaceAll(k, "\x00", "")] = stripNUL(x)
		}
		return out
	}
	return v
}

// cleanText drops NUL bytes, which PostgreSQL text cannot hold.
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func cleanOptText(s *string) *string {
	if s == nil {
		return nil
	}
	v := cleanText(*s)
	return &v
}
