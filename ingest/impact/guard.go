package impact

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// ParseGuard checks a --coverage-guard value: warn or refuse ("" is warn).
func ParseGuard(mode string) (string, error) {
	switch mode {
	case "", schema.CoverageGuardWarn:
		return schema.CoverageGuardWarn, nil
	case schema.CoverageGuardRefuse:
		return mode, nil
	}
	return "", fmt.Errorf("coverage guard %q: want %s or %s", mode, schema.CoverageGuardWarn, schema.CoverageGuardRefuse)
}

// Guard applies the coverage guard to imp: it records the mode (when a
// curve loses coverage) and the curves whose coverage loss accept
// acknowledges (curve keys), and returns
// the keys of the curves that lose coverage without acknowledgement (in
// the report's order). The caller refuses the run when the mode is refuse
// and the list is not empty.
func Guard(imp *schema.Impact, mode string, accept []string) []string {
	var open []string
	for i := range imp.Curves {
		c := &imp.Curves[i]
		if len(c.CoverageLoss) == 0 {
			continue
		}
		imp.Guard = mode
		if slices.Contains(accept, c.Key) {
			c.Accepted = true
			imp.Accepted = append(imp.Accepted, c.Key)
			continue
		}
		open = append(open, c.Key)
	}
	return open
}

// RefusalReason is the abort reason of a run the guard refused: the curves,
// and how to acknowledge the loss.
func RefusalReason(keys []string) string {
	return fmt.Sprintf("the coverage guard refused the run: it would shrink %s (%s); to replace them deliberately, "+
		"rerun with --accept-coverage-loss %s, or add a coverageLossAccepted entry (run id, curves, reason) to the run overrides",
		plural(len(keys), "published curve", "published curves"), strings.Join(keys, ", "), strings.Join(keys, ","))
}
