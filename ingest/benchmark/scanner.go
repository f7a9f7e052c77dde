package benchmark

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// rowScanner tokenises just enough JSON to find element boundaries.
type rowScanner struct {
	r      *bufio.Reader
	buf    []byte // the value being collected; reused between rows
	offset int64  // bytes consumed so far
	bom    bool
	dec    rowDecoder
}

// scanElement collects the bytes of one array element, starting with first,
// up to the ',' or ']' that ends it at nesting depth 0. delim is that byte,
// or 0 when the input ended first. elem is valid until the next scan.
func (s *rowScanner) scanElement(first byte) (elem []byte, delim byte, err error) {
	s.buf = s.buf[:0]
	var st scanState
	st.afterToken = isTokenByte(first)
	done, keep := st.step(first, untilDelim)
	if keep {
		s.buf = append(s.buf, first)
	}
	if done {
		return s.buf, first, nil
	}
	end, complete, err := s.scanValue(&st, untilDelim)
	if err != nil || !complete {
		return nil, 0, err
	}
	return s.buf, end, nil
}

// scanObject collects a top-level object whose '{' is consumed, up to its
// matching '}'. complete is false when the input ended first.
func (s *rowScanner) scanObject() (elem []byte, complete bool, err error) {
	s.buf = s.buf[:0]
	s.buf = append(s.buf, '{')
	st := scanState{depth: 1}
	_, complete, err = s.scanValue(&st, untilClose)
	if err != nil || !complete {
		return nil, complete, err
	}
	return s.buf, true, nil
}

func (s *rowScanner) readByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.offset++
	}
	return b, err
}

// skipSpace consumes whitespace (and a leading UTF-8 byte order mark) and
// returns the next byte, or 0 at the end of the input.
func (s *rowScanner) skipSpace() (byte, error) {
	for {
		b, err := s.readByte()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read: %w", err)
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		case 0xEF:
			if s.offset == 1 && !s.bom {
				if rest, err := s.r.Peek(2); err == nil && rest[0] == 0xBB && rest[1] == 0xBF {
					_, _ = s.r.Discard(2)
					s.offset += 2
					s.bom = true
					continue
				}
			}
		}
		return b, nil
	}
}

// readArray reads the elements of a top-level array whose '[' is consumed.
func (s *rowScanner) readArray(fn ElementFunc) (int, error) {
	rows := 0
	next, err := s.skipSpace()
	if err != nil {
		return rows, err
	}
	if next == ']' {
		return rows, s.expectEnd()
	}
	for {
		if next == 0 {
			return rows, eofAfter(rows)
		}
		elem, delim, err := s.scanElement(next)
		if err != nil {
			return rows, fmt.Errorf("row %d: %w", rows, err)
		}
		if delim == 0 {
			return rows, eofAfter(rows)
		}
		index := rows
		rows++
		if err := fn(&Element{Index: index, Raw: elem, dec: &s.dec}); err != nil {
			return rows, err
		}
		if delim == ']' {
			return rows, s.expectEnd()
		}
		if next, err = s.skipSpace(); err != nil {
			return rows, err
		}
	}
}

// readObject reads a single top-level row object whose '{' is consumed. The
// rest of the file must be whitespace; that is checked before the row is
// delivered, since a file with trailing garbage is not trustworthy.
func (s *rowScanner) readObject(fn ElementFunc) (int, error) {
	elem, complete, err := s.scanObject()
	if err != nil {
		return 0, err
	}
	if !complete {
		return 0, errors.New("unexpected end of file inside the row object")
	}
	if err := s.expectEnd(); err != nil {
		return 0, err
	}
	if err := fn(&Element{Index: 0, Raw: elem, dec: &s.dec}); err != nil {
		return 1, err
	}
	return 1, nil
}

// scanState tracks JSON nesting while element boundaries are searched.
type scanState struct {
	depth             int
	inString, escaped bool
	// afterToken: the last significant byte belongs to a number or
	// literal; spaced: a space was kept after it.
	afterToken, spaced bool
}

// scanMode says what ends the value being collected.
type scanMode int

const (
	// untilDelim: an array element, ended by ',' or ']' at depth 0 (the
	// delimiter is consumed but not kept).
	untilDelim scanMode = iota
	// untilClose: an object whose '{' is consumed, ended by its matching
	// '}' (kept).
	untilClose
)

// step feeds one byte through the state machine. It reports whether the
// byte ends the value, and whether the byte belongs to the value.
func (st *scanState) step(c byte, mode scanMode) (end, keep bool) {
	if st.inString {
		switch {
		case st.escaped:
			st.escaped = false
		case c == '\\':
			st.escaped = true
		case c == '"':
			st.inString = false
		}
		return false, true
	}
	switch c {
	case '"':
		st.inString = true
	case '{', '[':
		st.depth++
	case ',':
		if mode == untilDelim && st.depth == 0 {
			return true, false
		}
	case '}', ']':
		if mode == untilDelim && st.depth == 0 {
			if c == ']' {
				return true, false
			}
			return false, true
		}
		if st.depth > 0 {
			st.depth--
		}
		if mode == untilClose && st.depth == 0 {
			return true, true
		}
	}
	return false, true
}

// scanValue collects bytes into s.buf until the value ends, scanning the
// reader's buffered bytes in place rather than one call per byte. It
// returns the byte that ended the value (0 when the input ended first).
func (s *rowScanner) scanValue(st *scanState, mode scanMode) (end byte, complete bool, err error) {
	for {
		// Peeking at what is already buffered cannot fail.
		chunk, _ := s.r.Peek(s.r.Buffered())
		if len(chunk) == 0 {
			if _, perr := s.r.Peek(1); perr == io.EOF {
				return 0, false, nil
			} else if perr != nil {
				return 0, false, fmt.Errorf("read: %w", perr)
			}
			continue
		}
		start := 0 // chunk[start:i] is yet to be copied into buf
		for i := 0; i < len(chunk); i++ {
			c := chunk[i]
			if st.inString {
				if st.escaped {
					st.escaped = false
					continue
				}
				// Jump to the next quote or backslash (strings in rows
				// are short: a loop beats a search).
				for i < len(chunk) && chunk[i] != '"' && chunk[i] != '\\' {
					i++
				}
				if i == len(chunk) {
					continue
				}
				if chunk[i] == '\\' {
					st.escaped = true
				} else {
					st.inString = false
				}
				continue
			}
			switch c {
			case ' ', '\t', '\n', '\r':
				// Whitespace between tokens is dropped, except that a run
				// after a number or literal keeps one space, so `1 2` does
				// not become `12`. The rest of the run in this chunk is
				// skipped at once.
				s.buf = append(s.buf, chunk[start:i]...)
				if st.afterToken && !st.spaced {
					s.buf = append(s.buf, ' ')
					st.spaced = true
				}
				for i+1 < len(chunk) && isSpace(chunk[i+1]) {
					i++
				}
				start = i + 1
				continue
			}
			st.spaced = false
			if st.afterToken = tokenByte[c]; st.afterToken {
				// A number or literal holds no structure: skip the rest
				// of it in this chunk.
				for i+1 < len(chunk) && tokenByte[chunk[i+1]] {
					i++
				}
				continue
			}
			done, keep := st.step(c, mode)
			if !done {
				continue
			}
			n := i
			if keep {
				n = i + 1
			}
			s.buf = append(s.buf, chunk[start:n]...)
			s.offset += int64(i + 1)
			if _, err := s.r.Discard(i + 1); err != nil {
				return 0, false, fmt.Errorf("read: %w", err)
			}
			return c, true, nil
		}
		s.buf = append(s.buf, chunk[start:]...)
		s.offset += int64(len(chunk))
		if _, err := s.r.Discard(len(chunk)); err != nil {
			return 0, false, fmt.Errorf("read: %w", err)
		}
		if len(s.buf) > maxRowBytes {
			return 0, false, fmt.Errorf("row is larger than %d MiB", maxRowBytes>>20)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isTokenByte reports bytes of numbers and literals (true, false, null).
func isTokenByte(c byte) bool { return tokenByte[c] }

var tokenByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' || c == '+'
	}
	return t
}()

// expectEnd checks that only whitespace follows the top-level value.
func (s *rowScanner) expectEnd() error {
	b, err := s.skipSpace()
	if err != nil {
		return err
	}
	if b != 0 {
		return fmt.Errorf("trailing data after the JSON value at offset %d", s.offset-1)
	}
	return nil
}
