package overrides

import (
	"fmt"
	"slices"
	"strings"
)

// CoverageLossAccepted acknowledges that a run deliberately shrinks
// published curves (the report's coverage guard): under --coverage-guard
// refuse the run is let through for these curves, as with
// --accept-coverage-loss. It is this ingest's own entry kind, not the
// reference ledger's. Curves are curve keys as the report prints them.
type CoverageLossAccepted struct {
	RunID  int64    `json:"runId"`
	Curves []string `json:"curves"`
	Reason string   `json:"reason"`
}

// addCoverage validates and keeps a file's coverage-loss entries.
func (o *Overrides) addCoverage(entries []CoverageLossAccepted) error {
	for _, e := range entries {
		if e.RunID <= 0 {
			return fmt.Errorf("coverage loss acceptance: run id %d is not positive", e.RunID)
		}
		if strings.TrimSpace(e.Reason) == "" {
			return fmt.Errorf("coverage loss acceptance of run %d has no reason", e.RunID)
		}
		if len(e.Curves) == 0 {
			return fmt.Errorf("coverage loss acceptance of run %d names no curve", e.RunID)
		}
		for _, c := range e.Curves {
			if strings.TrimSpace(c) == "" {
				return fmt.Errorf("coverage loss acceptance of run %d: a curve key is empty", e.RunID)
			}
			if !slices.Contains(o.coverage[e.RunID], c) {
				o.coverage[e.RunID] = append(o.coverage[e.RunID], c)
			}
		}
	}
	return nil
}

// CoverageLossAccepted lists the curve keys whose coverage loss the ledger
// acknowledges for a run (every attempt).
func (o *Overrides) CoverageLossAccepted(runID int64) []string {
	if o == nil {
		return nil
	}
	return o.coverage[runID]
}
