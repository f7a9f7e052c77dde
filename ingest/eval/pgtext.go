package eval

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// storableJSON reports why a JSON text cannot be stored by PostgreSQL as
// text or jsonb, or "" when it can: it must be valid UTF-8 and hold no NUL
// byte, no escaped NUL (\u0000) and no escaped lone surrogate (a \ud800–
// \udbff not followed by a \udc00–\udfff, or a \udc00–\udfff alone).
// Backslashes only occur inside JSON strings, so escapes are found by a
// scan without a full parse.
func storableJSON(b []byte) string {
	if !utf8.Valid(b) {
		return fmt.Sprintf("is not valid UTF-8 (byte %d)", invalidUTF8At(b)+1)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "contains NUL bytes"
	}
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\\') // only escapes need a look
		if j < 0 {
			return ""
		}
		i += j
		if i+1 >= len(b) {
			return ""
		}
		if b[i+1] != 'u' {
			i++ // \" \\ \n …: skip the escaped character
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			i++
			continue // not an escape JSON accepts; the parser reports it
		}
		switch {
		case r == 0:
			return fmt.Sprintf(`contains an escaped NUL (\u0000) at byte %d`, i+1)
		case r >= 0xdc00 && r <= 0xdfff:
			return fmt.Sprintf(`contains a lone surrogate \u%04x at byte %d`, r, i+1)
		case r >= 0xd800 && r <= 0xdbff:
			lo, ok := -1, false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return fmt.Sprintf(`contains a lone surrogate \u%04x at byte %d`, r, i+1)
			}
			i += 11
			continue
		}
		i += 5
	}
	return ""
}

// storableString reports why a decoded string cannot be stored as text.
func storableString(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return "contains NUL bytes"
		}
	}
	return ""
}

func hex4(b []byte, at int) (int, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// invalidUTF8At is the offset of the first byte that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
