package trace

import (
	"io"
	"unicode/utf8"
)

// LogText turns the bytes of a server log into text PostgreSQL can hold,
// as the reference ingest reads a log (a UTF-8 decode, then NUL bytes
// removed): NUL bytes are dropped and every maximal ill-formed subsequence
// becomes one U+FFFD, as a WHATWG UTF-8 decoder does. Writes may cut a
// character anywhere; Close ends the text.
type LogText struct {
	w       io.Writer
	pending []byte // an incomplete sequence at the end of the last write
	out     []byte
}

// NewLogText writes the text of what is written to it into w.
func NewLogText(w io.Writer) *LogText { return &LogText{w: w} }

var replacement = []byte("\uFFFD")

func (t *LogText) Write(p []byte) (int, error) {
	buf := p
	if len(t.pending) > 0 {
		buf = append(t.pending, p...)
		t.pending = nil
	}
	if err := t.convert(buf, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what an incomplete last sequence stands for.
func (t *LogText) Close() error {
	buf := t.pending
	t.pending = nil
	return t.convert(buf, true)
}

func (t *LogText) convert(buf []byte, final bool) error {
	out := t.out[:0]
	for i := 0; i < len(buf); {
		b := buf[i]
		if b < utf8.RuneSelf {
			if b != 0 {
				out = append(out, b)
			}
			i++
			continue
		}
		if r, n := utf8.DecodeRune(buf[i:]); r != utf8.RuneError || n > 1 {
			out = append(out, buf[i:i+n]...)
			i += n
			continue
		}
		n, complete := illFormed(buf[i:])
		if !complete && !final {
			t.pending = append([]byte(nil), buf[i:]...)
			break
		}
		out = append(out, replacement...)
		i += n
	}
	t.out = out
	if len(out) == 0 {
		return nil
	}
	_, err := t.w.Write(out)
	return err
}

// illFormed is the length of the maximal subpart of an ill-formed sequence
// at the start of b (at least 1), and whether b holds all of it: false
// when b ends while the sequence could still become a valid character.
func illFormed(b []byte) (n int, complete bool) {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c == 0xE0:
		need, lo = 3, 0xA0
	case c == 0xED:
		need, hi = 3, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 3
	case c == 0xF0:
		need, lo = 4, 0x90
	case c == 0xF4:
		need, hi = 4, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 4
	default:
		return 1, true
	}
	n = 1
	for n < need {
		if n >= len(b) {
			return n, false
		}
		c := b[n]
		if n == 1 && (c < lo || c > hi) || n > 1 && (c < 0x80 || c > 0xBF) {
			return n, true
		}
		n++
	}
	// A whole sequence would have decoded: unreachable, kept safe.
	return 1, true
}
