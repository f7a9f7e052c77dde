package strictjson

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode/utf8"
)

// linearKeys is the number of keys an object may have before its duplicate
// check switches from comparing the hash of every earlier key to a map of
// hashes (one per nesting depth, reused from document to document).
const linearKeys = 24

// frame is one open object or array.
type frame struct {
	object   bool
	keyStart int            // index in Checker.keys of this object's first key
	key      []byte         // the current key of an object (decoded)
	index    int            // the current position in an array
	set      map[uint64]int // key hash → index in Checker.keys, for huge objects
}

// Checker holds the buffers of Check so that a reader checking many rows
// or lines allocates nothing per document. The zero value is ready to use;
// a Checker is not safe for concurrent use.
type Checker struct {
	frames []frame
	keys   [][]byte
	hashes []uint64 // maphash of keys[i]
	sets   []map[uint64]int
	seed   maphash.Seed
	seeded bool
}

// Check checks one document with a fresh Checker.
func Check(data []byte) error {
	var c Checker
	return c.Check(data)
}

// special marks the bytes that end the fast scan of a string: the quote,
// the backslash, control characters and the lead bytes of multi-byte UTF-8.
var special = func() (t [256]bool) {
	for b := 0; b < 0x20; b++ {
		t[b] = true
	}
	for b := 0x80; b < 0x100; b++ {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Parser states.
const (
	stValue = iota // a value is expected
	stKey          // an object key is expected
	stNext         // a value ended: ',' or a closing bracket is expected
)

// Check returns an *Error for the first duplicate key, NUL or invalid UTF-8
// in data, nil when there is none. It returns nil as soon as data turns
// out not to be JSON (the decoder reports that). Bytes after the first
// complete value are ignored.
func (c *Checker) Check(data []byte) error {
	c.frames, c.keys, c.hashes = c.frames[:0], c.keys[:0], c.hashes[:0]
	if !c.seeded {
		c.seed, c.seeded = maphash.MakeSeed(), true
	}
	n := len(data)
	i := 0
	state := stValue
	for {
		i = skipSpace(data, i)
		if i >= n {
			return nil
		}
		switch state {
		case stValue:
			switch data[i] {
			case '{':
				c.frames = append(c.frames, frame{object: true, keyStart: len(c.keys)})
				i = skipSpace(data, i+1)
				if i < n && data[i] == '}' {
					i++
					c.pop()
					state = stNext
				} else {
					state = stKey
				}
				continue
			case '[':
				c.frames = append(c.frames, frame{})
				i = skipSpace(data, i+1)
				if i < n && data[i] == ']' {
					i++
					c.pop()
					state = stNext
				}
				continue
			case '"':
				end, kind, _ := scanString(data, i+1)
				if kind != 0 {
					return &Error{Kind: kind, Field: c.path(nil), Offset: i}
				}
				if end < 0 {
					return nil
				}
				i = end
			default:
				for i < n && !endsScalar(data[i]) {
					i++
				}
			}
			state = stNext
		case stKey:
			if data[i] != '"' {
				return nil
			}
			end, kind, escaped := scanString(data, i+1)
			if end < 0 && kind == 0 {
				return nil
			}
			var key []byte
			if kind == 0 && escaped {
				key = unescape(data[i+1 : end-1])
			} else if kind == 0 {
				key = data[i+1 : end-1]
			} else {
				key = []byte(raw(data, i+1))
			}
			if kind != 0 {
				return &Error{Kind: kind, Field: c.path(key), Offset: i}
			}
			if c.duplicate(key) {
				return &Error{Kind: DuplicateKey, Field: c.path(key), Offset: i}
			}
			c.frames[len(c.frames)-1].key = key
			i = skipSpace(data, end)
			if i >= n || data[i] != ':' {
				return nil
			}
			i++
			state = stValue
		case stNext:
			if len(c.frames) == 0 {
				return nil
			}
			f := &c.frames[len(c.frames)-1]
			switch b := data[i]; {
			case b == ',':
				i++
				if f.object {
					state = stKey
				} else {
					f.index++
					state = stValue
				}
			case f.object && b == '}', !f.object && b == ']':
				i++
				c.pop()
			default:
				return nil
			}
		}
	}
}

func (c *Checker) pop() {
	f := c.frames[len(c.frames)-1]
	if f.object {
		clear(c.keys[f.keyStart:])
		c.keys, c.hashes = c.keys[:f.keyStart], c.hashes[:f.keyStart]
	}
	c.frames = c.frames[:len(c.frames)-1]
}

// duplicate records key in the innermost object and reports whether that
// object already had it. Keys are compared by hash first, so a row of a few
// dozen keys costs no allocation.
func (c *Checker) duplicate(key []byte) bool {
	f := &c.frames[len(c.frames)-1]
	h := maphash.Bytes(c.seed, key)
	n := len(c.keys) - f.keyStart
	switch {
	case f.set != nil:
		if i, ok := f.set[h]; ok && (bytes.Equal(c.keys[i], key) || c.linearDuplicate(f.keyStart, h, key)) {
			return true
		}
		f.set[h] = len(c.keys)
	case n < linearKeys:
		if c.linearDuplicate(f.keyStart, h, key) {
			return true
		}
	default:
		if c.linearDuplicate(f.keyStart, h, key) {
			return true
		}
		f.set = c.set(len(c.frames) - 1)
		for i := f.keyStart; i < len(c.keys); i++ {
			if _, ok := f.set[c.hashes[i]]; !ok {
				f.set[c.hashes[i]] = i
			}
		}
		f.set[h] = len(c.keys)
	}
	c.keys, c.hashes = append(c.keys, key), append(c.hashes, h)
	return false
}

// set returns the cleared map of hashes of the given depth.
func (c *Checker) set(depth int) map[uint64]int {
	for len(c.sets) <= depth {
		c.sets = append(c.sets, nil)
	}
	if c.sets[depth] == nil {
		c.sets[depth] = make(map[uint64]int, 4*linearKeys)
	}
	clear(c.sets[depth])
	return c.sets[depth]
}

// linearDuplicate compares key with the keys of the object from start on,
// hash first.
func (c *Checker) linearDuplicate(start int, h uint64, key []byte) bool {
	for i := start; i < len(c.hashes); i++ {
		if c.hashes[i] == h && bytes.Equal(c.keys[i], key) {
			return true
		}
	}
	return false
}

// path renders the location of the current value, or of key in the
// innermost object when key is not nil.
func (c *Checker) path(key []byte) string {
	var b strings.Builder
	last := len(c.frames) - 1
	for i, f := range c.frames {
		switch {
		case f.object && i == last && key != nil:
			writeKey(&b, key)
		case f.object:
			writeKey(&b, f.key)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func writeKey(b *strings.Builder, key []byte) {
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.Write(key)
}

// scanString scans a string whose opening quote precedes data[i]. It
// returns the index after the closing quote (-1 if the string is not
// well-formed), the first violation found, and whether the string holds
// escapes.
func scanString(data []byte, i int) (end int, kind Kind, escaped bool) {
	n := len(data)
	for {
		for i < n && !special[data[i]] {
			i++
		}
		if i >= n {
			return -1, 0, escaped
		}
		switch b := data[i]; {
		case b == '"':
			return i + 1, 0, escaped
		case b == '\\':
			escaped = true
			if i+1 >= n {
				return -1, 0, escaped
			}
			if data[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := Hex4(data, i+2)
			if !ok {
				return -1, 0, escaped
			}
			i += 6
			switch {
			case r == 0:
				return -1, NUL, escaped
			case r >= 0xD800 && r < 0xDC00:
				lo, ok := rune(0), false
				if i+1 < n && data[i] == '\\' && data[i+1] == 'u' {
					lo, ok = Hex4(data, i+2)
				}
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return -1, InvalidUTF8, escaped
				}
				i += 6
			case r >= 0xDC00 && r < 0xE000:
				return -1, InvalidUTF8, escaped
			}
		case b == 0:
			return -1, NUL, escaped
		case b < 0x20:
			return -1, 0, escaped // a raw control character: a syntax error
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return -1, InvalidUTF8, escaped
			}
			i += size
		}
	}
}

// Hex4 reads the four hex digits of a \u escape at data[i:]; false when
// they are not there.
func Hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, b := range data[i : i+4] {
		switch {
		case b >= '0' && b <= '9':
			r = r<<4 | rune(b-'0')
		case b >= 'a' && b <= 'f':
			r = r<<4 | rune(b-'a'+10)
		case b >= 'A' && b <= 'F':
			r = r<<4 | rune(b-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the body of a well-formed string that holds escapes
// and no violation.
func unescape(s []byte) []byte {
	return appendUnescaped(make([]byte, 0, len(s)), s)
}

// appendUnescaped appends the decoded body of a well-formed string that
// holds no violation to out.
func appendUnescaped(out, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				return append(out, s[i:]...)
			}
			out = append(out, s[i:i+j]...)
			i += j
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := Hex4(s, i+1)
			i += 4
			if r >= 0xD800 && r < 0xDC00 {
				lo, _ := Hex4(s, i+3)
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/' and anything the decoder will reject
			out = append(out, s[i])
		}
	}
	return out
}

// raw returns a key that holds a violation as far as it can be shown: up
// to its closing quote or the end of data.
func raw(data []byte, i int) string {
	end := i
	for end < len(data) && data[end] != '"' {
		if data[end] == '\\' {
			end++
		}
		end++
	}
	return strings.ToValidUTF8(strings.ReplaceAll(string(data[i:min(end, len(data))]), "\x00", `\u0000`), "\uFFFD")
}

func skipSpace(data []byte, i int) int {
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

// scalarEnd marks the bytes that end a number or literal.
var scalarEnd = func() (t [256]bool) {
	for _, b := range []byte{',', ']', '}', ' ', '\t', '\n', '\r', '"', '{', '[', ':'} {
		t[b] = true
	}
	return t
}()

// endsScalar reports whether b ends a number or literal.
func endsScalar(b byte) bool { return scalarEnd[b] }
