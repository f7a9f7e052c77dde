package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// unmappedEntities is the layout of unmapped-entities.json that existing
// alerting reads; its first four keys are the historical ones.
type unmappedEntities struct {
	Models      []string `json:"models"`
	Hardware    []string `json:"hardware"`
	Precisions  []string `json:"precisions"`
	Datasets    []string `json:"datasets"`
	Frameworks  []string `json:"frameworks"`
	SpecMethods []string `json:"specMethods"`
}

// UnmappedEntities writes the unmapped values of u as unmapped-entities.json
// ({"models": [...], "hardware": [...], "precisions": [...], "datasets":
// [...], "frameworks": [...], "specMethods": [...]}, every list sorted and
// unique) when any list is non-empty, and reports whether it wrote anything.
func UnmappedEntities(w io.Writer, u schema.Unmapped) (bool, error) {
	data, ok, err := unmappedEntitiesJSON(u)
	if err != nil || !ok {
		return false, err
	}
	if _, err := w.Write(data); err != nil {
		return false, fmt.Errorf("unmapped entities: %w", err)
	}
	return true, nil
}

// unmappedEntitiesJSON encodes u, or reports false when nothing is unmapped.
func unmappedEntitiesJSON(u schema.Unmapped) ([]byte, bool, error) {
	if u.Empty() {
		return nil, false, nil
	}
	data, err := json.MarshalIndent(unmappedEntities{
		Models:      sortedUnique(u.Models),
		Hardware:    sortedUnique(u.Hardware),
		Precisions:  sortedUnique(u.Precisions),
		Datasets:    sortedUnique(u.Datasets),
		Frameworks:  sortedUnique(u.Frameworks),
		SpecMethods: sortedUnique(u.SpecMethods),
	}, "", "  ")
	if err != nil {
		return nil, false, fmt.Errorf("unmapped entities: %w", err)
	}
	return append(data, '\n'), true, nil
}

// sortedUnique is a sorted copy of values without repeats, never nil.
func sortedUnique(values []string) []string {
	out := slices.Clone(values)
	slices.Sort(out)
	return nonNil(slices.Compact(out))
}
