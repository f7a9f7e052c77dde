package benchmark

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Raw row values come from ReadRows (json.Number for numbers) but plain Go
// numbers are accepted too, so rows built in code behave the same.

// jsonNumber returns the value of a JSON number. Strings are not numbers.
func jsonNumber(v any) (float64, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(t.String(), 64)
		if err != nil && !isRangeErr(err) {
			return 0, false
		}
		return f, true
	case float64:
		return t, true
	case float32:
		return float64(t), true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case int32:
		return float64(t), true
	}
	return 0, false
}

// FiniteJSONNumber returns a metric value that the database's jsonb_typeof
// calls a number: a finite JSON number (json.Number or a Go number), never a
// numeric string.
func FiniteJSONNumber(v any) (float64, bool) {
	f, ok := jsonNumber(v)
	return f, ok && schema.Finite(f)
}

// numericValue returns the value of a JSON number or of a numeric string
// (the whole trimmed string must parse). The value may be non-finite ("NaN",
// "inf", or a number too large for float64). Booleans, null, empty strings,
// arrays and objects are not numeric.
func numericValue(v any) (float64, bool) {
	if f, ok := jsonNumber(v); ok {
		return f, true
	}
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// integerValue returns the value of a number or numeric string that is a
// finite integer ("8192", 8192, 8192.0).
func integerValue(v any) (int64, bool) {
	f, ok := numericValue(v)
	if !ok || !schema.Finite(f) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// nonEmptyString returns the trimmed string value of v, if v is a string
// with something in it.
func nonEmptyString(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}

// parseBool reads true, "true" or "True" (any case) as true and everything
// else as false.
func parseBool(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return strings.EqualFold(strings.TrimSpace(t), "true")
	}
	return false
}

// present reports whether key exists in row with a non-null value.
func present(row map[string]any, key string) bool {
	v, ok := row[key]
	return ok && v != nil
}

// object returns v as a JSON object.
func object(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}
