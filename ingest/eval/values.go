package eval

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// The decoders below give what json.Unmarshal gives for one value of a
// sample line. On a line Members validated (validated true) they read the
// value's bytes directly (strings through strictjson.AppendString, arrays
// through strictjson.Elements), without decoding it again; on any other
// line they call json.Unmarshal. FuzzParseMatchesChecked compares the two.

// textOf is json.Unmarshal of raw into a string: a string literal's text,
// "" for null; ok is false for any other value.
func textOf(raw []byte, validated bool) (string, bool) {
	if !validated {
		return unmarshal[string](raw)
	}
	if isNull(raw) {
		return "", true
	}
	if len(raw) >= 2 && raw[0] == '"' {
		body := raw[1 : len(raw)-1]
		if bytes.IndexByte(body, '\\') < 0 {
			return string(body), true
		}
	}
	b, ok := strictjson.AppendString(nil, raw)
	return string(b), ok
}

// listOf is json.Unmarshal of raw into []json.RawMessage: an array's
// elements, nil for null; ok is false for any other value.
func listOf(raw []byte, validated bool) ([]json.RawMessage, bool) {
	if !validated {
		return unmarshal[[]json.RawMessage](raw)
	}
	if isNull(raw) {
		return nil, true
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	elems := strictjson.Elements(raw, nil)
	list := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		list[i] = e
	}
	return list, true
}

// firstOfStrings is json.Unmarshal of raw into []string, then its first
// element: ok is false when raw is not an array of strings and nulls, or
// is empty.
func firstOfStrings(raw []byte, validated bool) (string, bool) {
	if !validated {
		inner, ok := unmarshal[[]string](raw)
		if !ok || len(inner) == 0 {
			return "", false
		}
		return inner[0], true
	}
	list, ok := listOf(raw, true)
	if !ok || len(list) == 0 {
		return "", false
	}
	var first string
	for i, e := range list {
		s, ok := textOf(e, true)
		if !ok {
			return "", false
		}
		if i == 0 {
			first = s
		}
	}
	return first, true
}

// numberOf is json.Unmarshal of raw into a float64: a number that fits,
// 0 for null; ok is false for any other value.
func numberOf(raw []byte, validated bool) (float64, bool) {
	switch {
	case !validated:
		return unmarshal[float64](raw)
	case isNull(raw):
		return 0, true
	case !isNumber(raw):
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// anyOf is json.Unmarshal of raw into an any (nil when it does not
// decode), a number read directly on a validated line.
func anyOf(raw []byte, validated bool) any {
	if validated && isNumber(raw) {
		if f, ok := numberOf(raw, true); ok {
			return f
		}
	}
	v, _ := unmarshal[any](raw)
	return v
}

// isNumber says that a validated value is a number literal.
func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// unmarshal is json.Unmarshal into a T; ok is false when it fails.
func unmarshal[T any](raw []byte) (T, bool) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err == nil
}
