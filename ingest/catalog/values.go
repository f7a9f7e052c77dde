package catalog

import (
	"encoding/json"
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
