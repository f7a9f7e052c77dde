package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// List limits: how many values of one kind, and how many failures, each
// rendering shows before "… and N more".
const (
	markdownListLimit = 20
	textListLimit     = 10
)

// unmappedKind is one non-empty kind of unmapped values.
type unmappedKind struct {
	name   string
	values []string
}

// unmappedKinds are the non-empty kinds of u in report order: model,
// hardware, precision, framework, spec method, dataset.
func unmappedKinds(u schema.Unmapped) []unmappedKind {
	all := []unmappedKind{
		{"model", u.Models},
		{"hardware", u.Hardware},
		{"precision", u.Precisions},
		{"framework", u.Frameworks},
		{"spec method", u.SpecMethods},
		{"dataset", u.Datasets},
	}
	kinds := all[:0]
	for _, k := range all {
		if len(k.values) > 0 {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// unmappedValueCount is the number of unmapped values of every kind.
func unmappedValueCount(u schema.Unmapped) int {
	return len(u.Models) + len(u.Hardware) + len(u.Precisions) + len(u.Frameworks) + len(u.SpecMethods) + len(u.Datasets)
}

// valueList renders at most limit values, escaped with esc, comma-separated,
// then "… and N more". An empty value (for example a missing precision) is
// shown as empty.
func valueList(values []string, limit int, esc func(string) string, empty string) string {
	shown := values[:min(limit, len(values))]
	parts := make([]string, len(shown))
	for i, v := range shown {
		if parts[i] = esc(v); parts[i] == "" {
			parts[i] = empty
		}
	}
	line := strings.Join(parts, ", ")
	if more := len(values) - len(shown); more > 0 {
		line += fmt.Sprintf(" … and %d more", more)
	}
	return line
}

// failureLine is "artifact / file: reason", or "artifact: reason" when the
// failure names no file, with values escaped by esc.
func failureLine(f schema.Failure, esc func(string) string) string {
	var where []string
	for _, v := range []string{f.Artifact, f.File} {
		if e := esc(v); e != "" {
			where = append(where, e)
		}
	}
	reason := esc(f.Reason)
	if reason == "" {
		reason = "unknown reason"
	}
	if len(where) == 0 {
		return reason
	}
	return strings.Join(where, " / ") + ": " + reason
}
