package benchmark

import (
	"strconv"
	"unicode/utf8"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// rowDecoder decodes rows, keeping its buffers from one row to the next.
// Its fast path decodes a plain row object into map[string]any in one pass,
// checking what strictjson checks on the way; anything else (a syntax
// error, a duplicate key, a NUL, invalid UTF-8, a number beyond float64)
// is left to the strict check and the decoder of decodeRow, so that a bad
// row fails with the same words as ever. A rowDecoder is not safe for
// concurrent use.
//
// It is kept while it is worth more than 5 % of the first ingest against
// the strict check and encoding/json alone; the figure and the commands
// that measure it are in docs/performance.md, "Current figures".
type rowDecoder struct {
	data  []byte
	i     int
	depth int
	// members and items hold the members of the objects and the items of
	// the arrays being decoded, innermost last, until each is complete.
	members []member
	items   []any
	buf     []byte // the unescaped bytes of a string with escapes
	// strs interns keys and short string values: rows from one producer
	// repeat them, and a string is immutable, so rows may share them.
	strs map[string]string
	// seq holds the strings interned for the row before, in the order they
	// came, and n counts those of this row: rows from one producer repeat
	// their keys (and many values) in the same order, so the string at the
	// same place is compared before the intern map is asked.
	seq []string
	n   int
	// spare is a row handed back by Reader.Recycle: the next row decoded
	// on the fast path fills it instead of a new map.
	spare map[string]any
	chk   strictjson.Checker
	// disabled turns the fast path off (tests compare it with the rest).
	disabled bool
}

type member struct {
	key string
	val any
}

const (
	// maxFastDepth is the nesting beyond which the fast path gives up (the
	// decoder of decodeRow then decides).
	maxFastDepth = 256
	// maxInterned bounds the strings a decoder interns; maxInternLen is
	// the longest string interned.
	maxInterned  = 8192
	maxInternLen = 40
	// maxKeptBuf bounds the unescape buffer kept for the next string.
	maxKeptBuf = 1 << 20
	// maxSeq bounds the strings of a row remembered by place.
	maxSeq = 1024
	// maxSpareKeys bounds the size of a row kept for reuse.
	maxSpareKeys = 1024
)

// smallInts are the boxed values of the integers 0..1024, which rows use
// for counts, lengths and parallelism degrees; sharing them saves boxing.
var smallInts = func() (t [1025]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// decodeFast decodes data, which must be one JSON object with only JSON
// whitespace around it, as decodeRow's decoder would. ok is false when data
// is anything else or holds what strictjson refuses or a number beyond
// float64: the caller then runs the strict check and the decoder.
func (d *rowDecoder) decodeFast(data []byte) (row map[string]any, ok bool) {
	if d.disabled {
		return nil, false
	}
	clear(d.members)
	clear(d.items)
	d.data, d.i, d.depth, d.n = data, 0, 0, 0
	d.members, d.items = d.members[:0], d.items[:0]
	defer func() { d.data = nil }()
	d.skipSpace()
	if d.i >= len(data) || data[d.i] != '{' {
		return nil, false
	}
	d.i++
	row, ok = d.object()
	if !ok {
		return nil, false
	}
	d.skipSpace()
	return row, d.i == len(data)
}

func (d *rowDecoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte, 0 at the end.
func (d *rowDecoder) next() byte {
	if d.i < len(d.data) && d.data[d.i] > ' ' {
		return d.data[d.i]
	}
	d.skipSpace()
	if d.i >= len(d.data) {
		return 0
	}
	return d.data[d.i]
}

func (d *rowDecoder) value() (any, bool) {
	switch d.next() {
	case '{':
		d.i++
		m, ok := d.object()
		return m, ok
	case '[':
		d.i++
		return d.array()
	case '"':
		d.i++
		return d.str(true)
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	case 0:
		return nil, false
	default:
		return d.number()
	}
}

func (d *rowDecoder) literal(lit string) bool {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// object decodes the members of an object whose '{' is consumed.
func (d *rowDecoder) object() (map[string]any, bool) {
	if d.depth++; d.depth > maxFastDepth {
		return nil, false
	}
	base := len(d.members)
	if d.next() == '}' {
		d.i++
		d.depth--
		return map[string]any{}, true
	}
	for {
		if d.next() != '"' {
			return nil, false
		}
		d.i++
		key, ok := d.str(true)
		if !ok || d.next() != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		d.members = append(d.members, member{key, v})
		switch d.next() {
		case ',':
			d.i++
			continue
		case '}':
			d.i++
		default:
			return nil, false
		}
		break
	}
	members := d.members[base:]
	var m map[string]any
	if d.depth == 1 && d.spare != nil { // the row itself: reuse a spare one
		m, d.spare = d.spare, nil
	} else {
		m = make(map[string]any, len(members))
	}
	for _, kv := range members {
		m[kv.key] = kv.val
	}
	dup := len(m) != len(members) // a key named twice
	clear(members)
	d.members = d.members[:base]
	d.depth--
	return m, !dup
}

// array decodes the items of an array whose '[' is consumed.
func (d *rowDecoder) array() (any, bool) {
	if d.depth++; d.depth > maxFastDepth {
		return nil, false
	}
	base := len(d.items)
	if d.next() == ']' {
		d.i++
		d.depth--
		return []any{}, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		d.items = append(d.items, v)
		switch d.next() {
		case ',':
			d.i++
			continue
		case ']':
			d.i++
		default:
			return nil, false
		}
		break
	}
	items := d.items[base:]
	out := make([]any, len(items))
	copy(out, items)
	clear(items)
	d.items = d.items[:base]
	d.depth--
	return out, true
}

// str decodes a string whose opening quote is consumed. It refuses a NUL,
// invalid UTF-8 and an unpaired surrogate escape, as strictjson does.
func (d *rowDecoder) str(intern bool) (string, bool) {
	data := d.data
	start, i := d.i, d.i
	for i < len(data) {
		c := data[i]
		if c == '"' {
			d.i = i + 1
			return d.makeString(data[start:i], intern), true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	buf := append(d.buf[:0], data[start:i]...)
	defer func() {
		if cap(buf) <= maxKeptBuf { // a huge string's buffer is not kept
			d.buf = buf[:0]
		}
	}()
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.makeString(buf, intern), true
		case c == '\\':
			if i+1 >= len(data) {
				return "", false
			}
			e := data[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := strictjson.Hex4(data, i)
				if !ok || r == 0 || r >= 0xDC00 && r < 0xE000 {
					return "", false
				}
				i += 4
				if r >= 0xD800 && r < 0xDC00 {
					if i+1 >= len(data) || data[i] != '\\' || data[i+1] != 'u' {
						return "", false
					}
					lo, ok := strictjson.Hex4(data, i+2)
					if !ok || lo < 0xDC00 || lo >= 0xE000 {
						return "", false
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", false
			}
		case c < 0x20: // a NUL, or a raw control character (a syntax error)
			return "", false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return "", false
			}
			buf = append(buf, data[i:i+size]...)
			i += size
		}
	}
	return "", false
}

func (d *rowDecoder) makeString(b []byte, intern bool) string {
	if !intern || len(b) > maxInternLen {
		return string(b)
	}
	n := d.n
	d.n++
	if n < len(d.seq) && d.seq[n] == string(b) {
		return d.seq[n]
	}
	s, ok := d.strs[string(b)]
	if !ok {
		s = string(b)
		if d.strs == nil {
			d.strs = make(map[string]string, 256)
		}
		if len(d.strs) < maxInterned {
			d.strs[s] = s
		}
	}
	switch {
	case n < len(d.seq):
		d.seq[n] = s
	case n == len(d.seq) && n < maxSeq:
		d.seq = append(d.seq, s)
	}
	return s
}

// number decodes a JSON number as float64; one beyond float64's range is
// refused. A number of at most 15 digits without an exponent is computed
// exactly the way strconv.ParseFloat's exact path does (an integer below
// 2^53, divided by a power of ten up to 1e22: one correctly rounded
// operation); any other goes to ParseFloat.
func (d *rowDecoder) number() (any, bool) {
	data := d.data
	start, i := d.i, d.i
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	digits, scale := 0, 0 // digits read into mant; of them, after the point
	switch {
	case i >= len(data):
		return nil, false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			if digits < 19 {
				mant = mant*10 + uint64(data[i]-'0')
			}
			digits++
		}
	default:
		return nil, false
	}
	exact := true
	if i < len(data) && data[i] == '.' {
		i++
		j := i
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			if digits < 19 {
				mant = mant*10 + uint64(data[i]-'0')
			}
			digits++
		}
		if i == j {
			return nil, false
		}
		scale = i - j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		exact = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i = digitsFrom(data, i); i < 0 {
			return nil, false
		}
	}
	d.i = i
	if exact && digits <= 15 && scale <= 22 { // mant < 10^15 < 2^53
		if scale == 0 && !neg && mant < uint64(len(smallInts)) {
			return smallInts[mant], true
		}
		f := float64(mant)
		if scale > 0 {
			f /= pow10[scale]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(data[start:i]), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// pow10 are the powers of ten that float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// digitsFrom skips one or more digits from i; -1 when there is none.
func digitsFrom(data []byte, i int) int {
	j := i
	for j < len(data) && data[j] >= '0' && data[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
