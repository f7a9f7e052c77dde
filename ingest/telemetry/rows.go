package telemetry

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// rowReader reads the body of a telemetry CSV as encoding/csv does (comma
// separated, every record holding fields fields), but splits a line
// without a double quote itself: telemetry lines never quote, and the
// standard reader's per-field work was a large part of parsing. At the
// first line with a quote, the rest of the body (that line included) goes
// to encoding/csv, so quoted fields read exactly as before.
// FuzzRowReaderMatchesEncodingCSV holds the two to the same records, lines
// and errors.
type rowReader struct {
	br     *bufio.Reader
	fields int
	// lines read so far (the last is the current record's)
	lines int
	rec   []string
	raw   []byte
	// slow reads the rest once a quote is seen; its line 1 is file line
	// slowBase+1 (of the body).
	slow     *csv.Reader
	slowBase int
}

func newRowReader(br *bufio.Reader, fields int) *rowReader {
	return &rowReader{br: br, fields: fields, rec: make([]string, 0, fields)}
}

// Read returns the next record and its line (1-based, counted from the
// first body line), or io.EOF. A record with another field count comes
// with a *csv.ParseError wrapping csv.ErrFieldCount, as encoding/csv
// reports it. The record is reused by the next call.
func (r *rowReader) Read() ([]string, int, error) {
	if r.slow != nil {
		return r.readSlow()
	}
	for {
		raw, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.raw = append(r.raw[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) {
				raw, err = r.br.ReadSlice('\n')
				r.raw = append(r.raw, raw...)
			}
			raw = r.raw
		}
		atEOF := errors.Is(err, io.EOF)
		if err != nil && (!atEOF || len(raw) == 0) {
			// io.EOF, or a read error: what the line holds is cut short
			// (encoding/csv would parse it and drop the error).
			return nil, 0, err
		}
		r.lines++
		if bytes.IndexByte(raw, '"') >= 0 {
			// encoding/csv reads the line as it was read: its line
			// endings are not normalized twice.
			r.slowBase = r.lines - 1
			r.slow = csv.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(raw)), r.br))
			r.slow.ReuseRecord = true
			r.slow.FieldsPerRecord = r.fields
			return r.readSlow()
		}
		line := endLine(raw, atEOF)
		if len(line) == 0 || len(line) == 1 && line[0] == '\n' {
			continue // an empty line
		}
		r.rec = r.rec[:0]
		for f := range strings.SplitSeq(strings.TrimSuffix(string(line), "\n"), ",") {
			r.rec = append(r.rec, f)
		}
		if len(r.rec) != r.fields {
			return r.rec, r.lines, &csv.ParseError{StartLine: r.lines, Line: r.lines, Column: 1, Err: csv.ErrFieldCount}
		}
		return r.rec, r.lines, nil
	}
}

// endLine treats a line's end as encoding/csv does: a "\r" just before the
// end of the input is dropped, and a trailing "\r\n" becomes "\n".
func endLine(line []byte, atEOF bool) []byte {
	if n := len(line); atEOF && n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line = append(line[:n-2], '\n')
	}
	return line
}

func (r *rowReader) readSlow() ([]string, int, error) {
	rec, err := r.slow.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			pe.StartLine += r.slowBase
			pe.Line += r.slowBase
		}
		if !errors.Is(err, csv.ErrFieldCount) {
			return nil, 0, err // the record, if any, is cut short
		}
	}
	line, _ := r.slow.FieldPos(0)
	return rec, line + r.slowBase, err
}
