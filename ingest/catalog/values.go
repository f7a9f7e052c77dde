package catalog

import (
	"encoding/json"
	"math"
	"strconv"
)

// ValueText is a raw JSON value as the text an alias table is looked up
// by: a string as is, a number or boolean as written, anything else "".
func ValueText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(t), 'g', -1, 32)
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int32:
		return strconv.FormatInt(int64(t), 10)
	}
	return ""
}

// DescribeValue renders a raw JSON value for a failure reason: a string
// quoted, null, "an object", "an array", a number or boolean as written.
func DescribeValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(t)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return ValueText(v)
}

// IdentityInt reads an identity integer (conc, isl, osl, tp, ep, …): a JSON
// number with an integral value, or a string holding a plain decimal
// integer ("16", not " 16", "+16", "016", "16.0" or "0x10"), so that "16"
// names the same point as 16. The sign is the caller's to check.
func IdentityInt(v any) (int64, bool) {
	var f float64
	switch t := v.(type) {
	case string:
		if t == "" || len(t) > 18 || (t[0] == '0' && len(t) > 1) {
			return 0, false
		}
		var n int64
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(t[i]-'0')
		}
		return n, true
	case json.Number:
		x, err := strconv.ParseFloat(t.String(), 64)
		if err != nil {
			return 0, false
		}
		f = x
	case float64:
		f = t
	case float32:
		f = float64(t)
	case int:
		return int64(t), true
	case int64:
		return t, true
	case int32:
		return int64(t), true
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
