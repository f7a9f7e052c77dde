package source

import "bytes"

// The field decoders of the fast listing path. Each takes a whole member
// value of a document strictjson validated, stores it as encoding/json
// would, and is false for anything it is not sure of (the caller then
// hands the listing to parseListing). null leaves a non-pointer field
// alone, as encoding/json does.

// intValue stores a plain decimal integer literal.
func intValue(v []byte, dst *int64) bool {
	n, null, ok := plainInt(v)
	if ok && !null {
		*dst = n
	}
	return ok
}

// plainInt parses s, all of it, as null or a decimal integer literal of at
// most 18 digits (so that it fits an int64 without a range check).
func plainInt(s []byte) (n int64, null, ok bool) {
	if string(s) == "null" {
		return 0, true, true
	}
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 || len(s) > 1 && s[0] == '0' {
		return 0, false, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, false, true
}

// stringValue stores a string literal without escapes.
func stringValue(v []byte, dst *string) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return false
	}
	*dst = string(v[1 : len(v)-1])
	return true
}

// stringPtrValue is stringValue for a *string: null sets it to nil.
func stringPtrValue(v []byte, dst **string) bool {
	if string(v) == "null" {
		*dst = nil
		return true
	}
	var s string
	if !stringValue(v, &s) {
		return false
	}
	*dst = &s
	return true
}

// boolValue stores true or false.
func boolValue(v []byte, dst *bool) bool {
	switch string(v) {
	case "null":
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return false
	}
	return true
}

// countObjects estimates the number of artifacts in an array, for sizing:
// a listed artifact takes some 250 bytes or more.
func countObjects(list []byte) int {
	return min(len(list)/256+1, 1<<16)
}
