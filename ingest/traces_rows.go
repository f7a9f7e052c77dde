package ingest

import (
	"fmt"
	"sort"
)

// agentxRows is what the traces stage needs of the benchmark rows, which
// the benchmark stage's workers note as they read them (nothing is read
// twice): the dataset slugs of every raw row — the run's dataset is
// collected over all of them (reference-ingest.md §5.6) — and how many
// per-job AgentX rows were unmapped (their trace cannot be linked).
type agentxRows struct {
	unmapped int64
	// datasets maps a slug to where it was read (artifact/file); of
	// several places the smallest, so the message does not depend on
	// which worker read what.
	datasets map[string]string
}

// addSlug notes that where names slug.
func (r *agentxRows) addSlug(slug, where string) {
	if r.datasets == nil {
		r.datasets = map[string]string{}
	}
	if prev, ok := r.datasets[slug]; !ok || where < prev {
		r.datasets[slug] = where
	}
}

// runDataset is the run's one dataset slug ("" when no row names one); two
// different slugs are an error that aborts the ingest.
func (r agentxRows) runDataset(runID int64) (string, error) {
	if len(r.datasets) == 0 {
		return "", nil
	}
	slugs := make([]string, 0, len(r.datasets))
	for s := range r.datasets {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	if len(slugs) > 1 {
		return "", fmt.Errorf("conflicting dataset provenance in workflow run %d: %q (%s) and %q (%s); one run replays one dataset",
			runID, slugs[0], r.datasets[slugs[0]], slugs[1], r.datasets[slugs[1]])
	}
	return slugs[0], nil
}
