package strictjson

import "fmt"

// Kind is the kind of a strictness violation.
type Kind int

const (
	// DuplicateKey: an object names the same key twice.
	DuplicateKey Kind = iota + 1
	// NUL: a string (value or key) holds a NUL character.
	NUL
	// InvalidUTF8: a string holds bytes that are not UTF-8, or an escaped
	// surrogate that is not part of a pair.
	InvalidUTF8
)

// Error is a strictness violation. Field is the path of the offending key
// or string value: object keys joined by ".", array positions as "[i]"
// (e.g. "arguments[0].prompt").
type Error struct {
	Kind  Kind
	Field string
	// Offset is the byte offset in the document of the opening quote of
	// the offending key or string.
	Offset int
}

// Error renders the violation with the wording the ingest report uses:
// `duplicate key "conc"`, `field "model": string holds a NUL`,
// `field "model": invalid UTF-8`.
func (e *Error) Error() string {
	switch e.Kind {
	case DuplicateKey:
		return fmt.Sprintf("duplicate key %q", e.Field)
	case NUL:
		return fmt.Sprintf("field %q: string holds a NUL", e.Field)
	case InvalidUTF8:
		return fmt.Sprintf("field %q: invalid UTF-8", e.Field)
	default:
		return fmt.Sprintf("field %q: strict JSON violation %d", e.Field, int(e.Kind))
	}
}
