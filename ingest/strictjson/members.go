package strictjson

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"unicode/utf8"
)

// Member is one member of a top-level object: its key, unescaped, and the
// bytes of its value as written. Both may alias the document.
type Member struct {
	Key   []byte
	Value []byte
	// KeyEscaped: the key was written with escapes (Key is unescaped).
	KeyEscaped bool
}

// maxMembersDepth is the nesting beyond which Members gives up, leaving the
// document to Check and a decoder.
const maxMembersDepth = 256

// Members validates data in one pass and splits it into the members of its
// top-level object, appended to dst. ok is true only when data is one JSON
// object (JSON whitespace around it allowed) that is valid by the JSON
// grammar and holds nothing Check refuses; on false the caller runs Check
// and its decoder to learn what is wrong, so that the error reads as ever.
func (c *Checker) Members(data []byte, dst []Member) (members []Member, ok bool) {
	c.frames, c.keys, c.hashes = c.frames[:0], c.keys[:0], c.hashes[:0]
	if !c.seeded {
		c.seed, c.seeded = maphash.MakeSeed(), true
	}
	v := validator{c: c, data: data, members: dst}
	v.i = skipSpace(data, 0)
	if v.i >= len(data) || data[v.i] != '{' || !v.object(true) {
		return dst, false
	}
	return v.members, skipSpace(data, v.i) == len(data)
}

// validator walks a document by the JSON grammar.
type validator struct {
	c       *Checker
	data    []byte
	i       int
	members []Member
}

// next skips whitespace and returns the next byte, 0 at the end.
func (v *validator) next() byte {
	v.i = skipSpace(v.data, v.i)
	if v.i >= len(v.data) {
		return 0
	}
	return v.data[v.i]
}

func (v *validator) value() bool {
	switch v.next() {
	case '{':
		return v.object(false)
	case '[':
		return v.array()
	case '"':
		end, _, ok := validString(v.data, v.i+1)
		v.i = end
		return ok
	case 't':
		return v.literal("true")
	case 'f':
		return v.literal("false")
	case 'n':
		return v.literal("null")
	default:
		return v.number()
	}
}

func (v *validator) literal(lit string) bool {
	if len(v.data)-v.i < len(lit) || string(v.data[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

// object validates the object whose '{' is at v.i; top records its members.
func (v *validator) object(top bool) bool {
	c := v.c
	if len(c.frames) >= maxMembersDepth {
		return false
	}
	c.frames = append(c.frames, frame{object: true, keyStart: len(c.keys)})
	v.i++
	if v.next() == '}' {
		v.i++
		c.pop()
		return true
	}
	for {
		if v.next() != '"' {
			return false
		}
		start := v.i + 1
		end, escaped, ok := validString(v.data, start)
		if !ok {
			return false
		}
		key := v.data[start : end-1]
		if escaped {
			key = unescape(key)
		}
		if c.duplicate(key) {
			return false
		}
		v.i = end
		if v.next() != ':' {
			return false
		}
		v.i++
		vstart := skipSpace(v.data, v.i)
		if !v.value() {
			return false
		}
		if top {
			v.members = append(v.members, Member{Key: key, Value: v.data[vstart:v.i], KeyEscaped: escaped})
		}
		switch v.next() {
		case ',':
			v.i++
			continue
		case '}':
			v.i++
			c.pop()
			return true
		default:
			return false
		}
	}
}

// array validates the array whose '[' is at v.i.
func (v *validator) array() bool {
	c := v.c
	if len(c.frames) >= maxMembersDepth {
		return false
	}
	c.frames = append(c.frames, frame{})
	v.i++
	if v.next() == ']' {
		v.i++
		c.pop()
		return true
	}
	for {
		if !v.value() {
			return false
		}
		switch v.next() {
		case ',':
			v.i++
		case ']':
			v.i++
			c.pop()
			return true
		default:
			return false
		}
	}
}

// number validates a number by the JSON grammar.
func (v *validator) number() bool {
	data, i := v.data, v.i
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		return false
	}
	if i < len(data) && data[i] == '.' {
		if j := digits(data, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return false
		}
		i = j
	}
	v.i = i
	return true
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// validString validates a string whose opening quote precedes data[i]:
// valid escapes, no raw control character, no NUL, valid UTF-8 and paired
// surrogate escapes. It returns the index after the closing quote and
// whether the string holds escapes.
func validString(data []byte, i int) (end int, escaped, ok bool) {
	n := len(data)
	for {
		// Eight bytes at a time while none of them is special.
		for i+8 <= n && !hasSpecial(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < n && !special[data[i]] {
			i++
		}
		if i >= n {
			return i, escaped, false
		}
		switch b := data[i]; {
		case b == '"':
			return i + 1, escaped, true
		case b == '\\':
			escaped = true
			if i+1 >= n {
				return i, escaped, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
			default:
				return i, escaped, false
			}
			r, ok := Hex4(data, i+2)
			if !ok || r == 0 || r >= 0xDC00 && r < 0xE000 {
				return i, escaped, false
			}
			i += 6
			if r >= 0xD800 && r < 0xDC00 {
				if i+1 >= n || data[i] != '\\' || data[i+1] != 'u' {
					return i, escaped, false
				}
				lo, ok := Hex4(data, i+2)
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return i, escaped, false
				}
				i += 6
			}
		case b < 0x20:
			return i, escaped, false
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, false
			}
			i += size
		}
	}
}

// hasSpecial reports whether one of the eight bytes of w is special: a
// quote, a backslash, a control character or not ASCII.
func hasSpecial(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (ones * '"')
	backslash := w ^ (ones * '\\')
	return ((w-ones*0x20)&^w|(quote-ones)&^quote|(backslash-ones)&^backslash|w)&highs != 0
}

// AppendString appends the decoded text of lit, a JSON string literal
// (quotes included) that Members validated, to dst. ok is false when lit
// is not a string literal.
func AppendString(dst, lit []byte) (out []byte, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return dst, false
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return append(dst, body...), true
	}
	return appendUnescaped(dst, body), true
}

// Split appends the members of obj, a JSON object that Members validated
// (alone or inside a larger document), to dst. It checks nothing: on any
// other input its result is meaningless.
func Split(obj []byte, dst []Member) []Member {
	i := skipSpace(obj, 0) + 1 // past '{'
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return dst
		}
		end := skipString(obj, i+1)
		key := obj[i+1 : end-1]
		escaped := bytes.IndexByte(key, '\\') >= 0
		if escaped {
			key = unescape(key)
		}
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // past ':'
		vend := skipValue(obj, i)
		dst = append(dst, Member{Key: key, Value: obj[i:vend], KeyEscaped: escaped})
		i = skipSpace(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return dst
		}
		i++
	}
}

// Elements appends the elements of arr, a JSON array that Members
// validated (alone or inside a larger document), to dst. Like Split, it
// checks nothing.
func Elements(arr []byte, dst [][]byte) [][]byte {
	i := skipSpace(arr, 0) + 1 // past '['
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return dst
		}
		end := skipValue(arr, i)
		dst = append(dst, arr[i:end])
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return dst
		}
		i++
	}
}

// skipString returns the index after the closing quote of a valid string
// whose opening quote precedes data[i].
func skipString(data []byte, i int) int {
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		q := i + j
		k := q
		for k > i && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 { // not escaped
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the index after the valid value starting at data[i].
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			i = skipString(data, i+1)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}
