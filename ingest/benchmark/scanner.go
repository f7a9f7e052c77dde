package benchmark

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// rowScanner tokenises just enough JSON to find element boundaries.
type rowScanner struct {
	r      *bufio.Reader
	offset int64 // bytes consumed so far
	bom    bool
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
func (s *rowScanner) readArray(fn RowFunc) (int, error) {
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
		row, rowErr := decodeRow(index, elem)
		rows++
		if err := fn(index, row, rowErr); err != nil {
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
func (s *rowScanner) readObject(fn RowFunc) (int, error) {
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
	row, rowErr := decodeRow(0, elem)
	if err := fn(0, row, rowErr); err != nil {
		return 1, err
	}
	return 1, nil
}

// scanElement collects the bytes of one array element, starting with first,
// up to the ',' or ']' that ends it at nesting depth 0. delim is that byte,
// or 0 when the input ended first.
func (s *rowScanner) scanElement(first byte) (elem []byte, delim byte, err error) {
	var buf bytes.Buffer
	depth := 0
	inString, escaped := false, false
	b := first
	for {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case (b == ',' || b == ']') && depth == 0:
			return buf.Bytes(), b, nil
		case b == '}' || b == ']':
			if depth > 0 {
				depth--
			}
		}
		buf.WriteByte(b)
		if buf.Len() > maxRowBytes {
			return nil, 0, fmt.Errorf("row is larger than %d MiB", maxRowBytes>>20)
		}
		next, rerr := s.readByte()
		if rerr == io.EOF {
			return nil, 0, nil
		}
		if rerr != nil {
			return nil, 0, fmt.Errorf("read: %w", rerr)
		}
		b = next
	}
}

// scanObject collects a top-level object whose '{' is consumed, up to its
// matching '}'. complete is false when the input ended first.
func (s *rowScanner) scanObject() (elem []byte, complete bool, err error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	depth := 1
	inString, escaped := false, false
	for depth > 0 {
		b, rerr := s.readByte()
		if rerr == io.EOF {
			return nil, false, nil
		}
		if rerr != nil {
			return nil, false, fmt.Errorf("read: %w", rerr)
		}
		buf.WriteByte(b)
		if buf.Len() > maxRowBytes {
			return nil, false, fmt.Errorf("row object is larger than %d MiB", maxRowBytes>>20)
		}
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		}
	}
	return buf.Bytes(), true, nil
}

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
