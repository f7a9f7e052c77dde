package runstate

import (
	"fmt"
	"maps"
	"slices"
)

// AgentX is what the traces stage needs of the benchmark rows, which
// the benchmark stage's workers note as they read them (nothing is read
// twice): the dataset slugs of every raw row — the run's dataset is
// collected over all of them (one run replays one dataset) — and how many
// per-job AgentX rows were unmapped (their trace cannot be linked).
type AgentX struct {
	// Unmapped counts the per-job AgentX rows that were unmapped.
	Unmapped int64
	// datasets maps a slug to where it was read (artifact/file); of
	// several places the smallest, so the message does not depend on
	// which worker read what.
	datasets map[string]string
}

// AddSlug notes that where names slug.
func (r *AgentX) AddSlug(slug, where string) {
	if r.datasets == nil {
		r.datasets = map[string]string{}
	}
	if prev, ok := r.datasets[slug]; !ok || where < prev {
		r.datasets[slug] = where
	}
}

// Dataset is the run's one dataset slug ("" when no row names one); two
// different slugs are an error that aborts the ingest.
func (r AgentX) Dataset(runID int64) (string, error) {
	if len(r.datasets) == 0 {
		return "", nil
	}
	slugs := slices.Sorted(maps.Keys(r.datasets))
	if len(slugs) > 1 {
		return "", fmt.Errorf("conflicting dataset provenance in workflow run %d: %q (%s) and %q (%s); one run replays one dataset",
			runID, slugs[0], r.datasets[slugs[0]], slugs[1], r.datasets[slugs[1]])
	}
	return slugs[0], nil
}

// Add adds what a benchmark stage worker noted.
func (r *AgentX) Add(o AgentX) {
	r.Unmapped += o.Unmapped
	for slug, where := range o.datasets {
		r.AddSlug(slug, where)
	}
}
