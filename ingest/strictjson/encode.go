package strictjson

import (
	"encoding/json"
	"unicode/utf8"
)

// AppendQuoted appends s as encoding/json writes a string. A string with
// nothing it escapes (a control character, a quote or backslash, <, > or
// &, U+2028, U+2029, invalid UTF-8) is copied between quotes; any other
// is encoded by encoding/json itself.
func AppendQuoted(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(dst, enc...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// AppendCompact appends v, a valid JSON value, as encoding/json writes a
// json.RawMessage: white space outside strings dropped, and <, >, &,
// U+2028 and U+2029 escaped inside them, in one pass (json.Compact and
// json.HTMLEscape take two, through buffers). An empty v is null. On
// anything but valid JSON its result is meaningless.
func AppendCompact(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, "null"...)
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
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			continue
		case inString && c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[v[i+2]&0xF])
			i += 2
			continue
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		case !inString && c == '"':
			inString = true
		}
		dst = append(dst, c)
	}
	return dst
}
