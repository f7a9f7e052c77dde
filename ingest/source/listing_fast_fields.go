package source

import "bytes"

// intField stores a plain decimal integer literal at data[i] in dst; null
// leaves dst alone, as encoding/json does for a non-pointer field.
func intField(data []byte, i int, dst *int64) (int, bool) {
	if hasLiteral(data, i, "null") {
		return i + 4, true
	}
	end := i
	if end < len(data) && data[end] == '-' {
		end++
	}
	start := end
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	n, _, ok := plainInt(data[i:end])
	if !ok || end == start || end < len(data) && (data[end] == '.' || data[end] == 'e' || data[end] == 'E') {
		return i, false
	}
	*dst = n
	return end, true
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

// stringField stores a string literal without escapes at data[i] in dst;
// null leaves dst alone.
func stringField(data []byte, i int, dst *string) (int, bool) {
	if hasLiteral(data, i, "null") {
		return i + 4, true
	}
	end := plainStringEnd(data, i)
	if end < 0 {
		return i, false
	}
	*dst = string(data[i+1 : end-1])
	return end, true
}

// stringPtrField is stringField for a *string: null sets it to nil.
func stringPtrField(data []byte, i int, dst **string) (int, bool) {
	if hasLiteral(data, i, "null") {
		*dst = nil
		return i + 4, true
	}
	var s string
	end, ok := stringField(data, i, &s)
	if ok {
		*dst = &s
	}
	return end, ok
}

// boolField stores true or false at data[i] in dst; null leaves it alone.
func boolField(data []byte, i int, dst *bool) (int, bool) {
	switch {
	case hasLiteral(data, i, "null"):
		return i + 4, true
	case hasLiteral(data, i, "true"):
		*dst = true
		return i + 4, true
	case hasLiteral(data, i, "false"):
		*dst = false
		return i + 5, true
	}
	return i, false
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// plainStringEnd returns the index after the string literal whose opening
// quote is at data[i], or -1 when it is not one or holds an escape.
func plainStringEnd(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	j := bytes.IndexByte(data[i+1:], '"')
	if j < 0 || bytes.IndexByte(data[i+1:i+1+j], '\\') >= 0 {
		return -1
	}
	return i + 2 + j
}

// skipValue returns the index after the value at data[i], in a document
// that strictjson validated.
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return i, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a number or literal
				return i, true
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, depth == 0
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// countObjects estimates the number of artifacts in an array, for sizing:
// a listed artifact takes some 250 bytes or more.
func countObjects(list []byte) int {
	return min(len(list)/256+1, 1<<16)
}
