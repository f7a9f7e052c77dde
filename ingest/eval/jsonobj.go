package eval

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A sample line's remaining arguments, data and metrics are stored as JSON
// objects with sorted keys, byte for byte as encoding/json encodes these
// maps (TestAppendObjectsAreMarshal); written by hand, because reflection
// over thousands of small maps per run took more CPU than the rest of a
// line's split (about 25 ms per first ingest of the 5000-point shape).

// appendRawObject appends m with its keys sorted, each raw value compacted
// and HTML-escaped as encoding/json does a json.RawMessage.
func appendRawObject(b []byte, m map[string]json.RawMessage) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, k)
		b = appendRaw(b, m[k])
	}
	return append(b, '}')
}

// appendArgsObject is appendRawObject for an object of objects.
func appendArgsObject(b []byte, m map[string]map[string]json.RawMessage) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, k)
		if m[k] == nil {
			b = append(b, "null"...)
			continue
		}
		b = appendRawObject(b, m[k])
	}
	return append(b, '}')
}

// appendFloatObject appends m with its keys sorted and its numbers as
// encoding/json writes a float64; false for a NaN or an infinity, which it
// refuses.
func appendFloatObject(b []byte, m map[string]float64) ([]byte, bool) {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, k)
		f := m[k]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		format := byte('f')
		if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, f, format, -1, 64)
		if format == 'e' { // e-09 as e-9
			if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
				b[n-2] = b[n-1]
				b = b[:n-1]
			}
		}
	}
	return append(b, '}'), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendKey appends k quoted and a colon; a key encoding/json would
// escape anything in goes through it.
func appendKey(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			enc, _ := json.Marshal(k) // a string always encodes
			return append(append(b, enc...), ':')
		}
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendRaw appends a valid JSON value as encoding/json writes a
// json.RawMessage: compacted (white space outside strings dropped), with
// <, >, & and U+2028, U+2029 escaped inside strings. The value must be
// valid JSON (the caller's were checked with their line).
func appendRaw(b []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	const hex = "0123456789abcdef"
	inString, escaped := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString && (c == '<' || c == '>' || c == '&'):
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			continue
		case inString && c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			b = append(b, '\\', 'u', '2', '0', '2', hex[v[i+2]&0xF])
			i += 2
			continue
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		case !inString && c == '"':
			inString = true
		}
		b = append(b, c)
	}
	return b
}
