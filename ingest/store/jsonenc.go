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
// keys of the last few distinct key sets, which later rows (rows of a run
// share their metric names, a few shapes of rows interleaved) reuse after
// a lookup per key instead of sorting again.
type metricsEncoder struct {
	sets [][]string // most recently used first
}

// maxKeySets bounds the key sets a metricsEncoder keeps.
const maxKeySets = 8

// sortedKeys returns m's keys in sorted order; the slice is the encoder's.
func (e *metricsEncoder) sortedKeys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	for i, keys := range e.sets {
		if len(keys) != len(m) || !allIn(keys, m) {
			continue
		}
		// As many distinct keys, all of them in m: the same set.
		copy(e.sets[1:i+1], e.sets[:i])
		e.sets[0] = keys
		return keys
	}
	var keys []string
	if len(e.sets) == maxKeySets { // reuse the least recently used
		keys = e.sets[maxKeySets-1][:0]
		e.sets = e.sets[:maxKeySets-1]
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.sets = append(e.sets, nil)
	copy(e.sets[1:], e.sets)
	e.sets[0] = keys
	return keys
}

// allIn reports whether every key is in m.
func allIn(keys []string, m map[string]any) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
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
