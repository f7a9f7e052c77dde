package eval

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// A sample line's remaining arguments, data and metrics are stored as JSON
// objects with sorted keys, byte for byte as encoding/json encodes these
// maps (TestAppendObjectsAreMarshal); written by hand, because reflection
// over thousands of small maps per run costs more CPU than the rest of a
// line's split (docs/performance.md, "Current figures").

// appendRawObject appends m with its keys sorted, each raw value as
// encoding/json writes a json.RawMessage (strictjson.AppendCompact).
func appendRawObject(b []byte, m map[string]json.RawMessage) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strictjson.AppendQuoted(b, k), ':')
		b = strictjson.AppendCompact(b, m[k])
	}
	return append(b, '}')
}

// appendArgsObject is appendRawObject for an object of objects.
func appendArgsObject(b []byte, m map[string]map[string]json.RawMessage) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strictjson.AppendQuoted(b, k), ':')
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
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strictjson.AppendQuoted(b, k), ':')
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
