package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Decode decodes data into v strictly, for control files that operators
// write and a reviewer approves (the run-override ledger): data must hold
// exactly one JSON value with nothing but whitespace after it, nothing
// Check refuses (a duplicate key at any depth, a NUL, invalid UTF-8) and
// no object key that v has no field for. A lenient reading would apply
// something other than what was reviewed: the first of two objects, the
// last of two spellings of a key.
//
// Its errors name the position as "line L, column C" (columns count
// bytes), except an unknown field, which encoding/json reports by name
// only. An *Error from Check stays reachable with errors.As.
func Decode(data []byte, v any) error {
	if err := Check(data); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return fmt.Errorf("%s: %w", Position(data, e.Offset), err)
		}
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty document: one JSON value is expected")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			// Offset counts the bytes read, the offending one included.
			return fmt.Errorf("%s: %s", Position(data, int(syntax.Offset)-1), syntax.Error())
		case errors.As(err, &typ):
			// Offset is the end of the offending value.
			return fmt.Errorf("%s: %s", Position(data, int(typ.Offset)), strings.TrimPrefix(typ.Error(), "json: "))
		default:
			return errors.New(strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if end := skipSpace(data, int(dec.InputOffset())); end < len(data) {
		return fmt.Errorf("%s: data after the JSON value (exactly one value is expected)", Position(data, end))
	}
	return nil
}

// Position renders a byte offset of data as "line L, column C", both
// counted from 1, columns in bytes.
func Position(data []byte, offset int) string {
	offset = min(max(offset, 0), len(data))
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := offset - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}
