package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/inferencex/ingest/schema"
)

// JSON writes s as the machine-readable summary: the Summary's own field
// names, indented by two spaces, every list rendered as [] rather than null,
// and a trailing newline. s is not modified.
func JSON(w io.Writer, s *schema.Summary) error {
	if s == nil {
		return errors.New("summary json: nil summary")
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(withEmptyLists(*s)); err != nil {
		return fmt.Errorf("summary json: %w", err)
	}
	return nil
}

// withEmptyLists returns s with every nil list replaced by an empty one.
func withEmptyLists(s schema.Summary) schema.Summary {
	s.Failures = nonNil(s.Failures)
	s.Notes = nonNil(s.Notes)
	s.Details.UnknownMetrics = nonNil(s.Details.UnknownMetrics)
	s.Unmapped = schema.Unmapped{
		Models:      nonNil(s.Unmapped.Models),
		Hardware:    nonNil(s.Unmapped.Hardware),
		Precisions:  nonNil(s.Unmapped.Precisions),
		Frameworks:  nonNil(s.Unmapped.Frameworks),
		SpecMethods: nonNil(s.Unmapped.SpecMethods),
		Datasets:    nonNil(s.Unmapped.Datasets),
	}
	return s
}

// nonNil is xs, or an empty slice when xs is nil.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
