package impact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// AcceptAll is the --accept-coverage-loss value that acknowledges every
// coverage loss of the run, whatever its curves.
const AcceptAll = "all"

// lossTokenPrefix starts every loss token, so that a token is never taken
// for a curve key (keys start with a model name).
const lossTokenPrefix = "loss-"

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

// LossToken names a set of curves that lose coverage in one short word:
// "loss-" and the first 10 hex digits of the SHA-256 of the sorted keys.
// Passing it to --accept-coverage-loss acknowledges exactly that set; a
// run whose loss set differs (another curve shrinks) has another token, so
// an acknowledgement never covers a loss nobody saw. "" for no keys.
func LossToken(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return lossTokenPrefix + hex.EncodeToString(sum[:])[:10]
}

// Guard applies the coverage guard to imp: it records the mode (when a
// curve loses coverage) and the curves whose coverage loss accept
// acknowledges, and returns the keys of the curves that lose coverage
// without acknowledgement (in the report's order). An entry of accept
// acknowledges a curve by its key, every curve left by the loss token of
// those left (LossToken, recorded as imp.LossToken), or every curve
// (AcceptAll). The caller refuses the run when the mode is refuse and the
// list is not empty.
func Guard(imp *schema.Impact, mode string, accept []string) []string {
	var open []int
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
		open = append(open, i)
	}
	keys := make([]string, len(open))
	for j, i := range open {
		keys[j] = imp.Curves[i].Key
	}
	imp.LossToken = LossToken(keys)
	if len(keys) == 0 || !slices.Contains(accept, AcceptAll) && !slices.Contains(accept, imp.LossToken) {
		return keys
	}
	for _, i := range open {
		imp.Curves[i].Accepted = true
		imp.Accepted = append(imp.Accepted, imp.Curves[i].Key)
	}
	return nil
}

// RefusalReason is the abort reason of a run the guard refused: how many
// curves, and how to acknowledge the loss (the token of keys, or all).
// The curves themselves are in the report's coverage-loss table: the
// reason is one line of the headline and of the ledger, and stays short.
func RefusalReason(keys []string) string {
	return fmt.Sprintf("the coverage guard refused the run: it would shrink %s (listed in the report); "+
		"to replace them deliberately, rerun with --accept-coverage-loss %s (or %s) or add a coverageLossAccepted entry to the run overrides",
		wording.Plural(len(keys), "published curve", "published curves"), LossToken(keys), AcceptAll)
}

// CheckAppendOnly records in imp what an append-only run did to the
// points the dashboard showed: the points it added, and every published
// point it removed, re-ran, measured with another recipe or replaced by
// another (none is allowed), and returns the touched points.
func CheckAppendOnly(imp *schema.Impact) []schema.TouchedPoint {
	check := &schema.AppendOnlyCheck{Added: imp.PointsGained, Touched: []schema.TouchedPoint{}}
	for _, c := range imp.Curves {
		for _, r := range c.Replaced {
			how := schema.TouchedReplaced
			if r.MatchedBy == schema.MatchedByConcurrency && r.Previous.Conc == r.New.Conc && r.Previous.Arm == r.New.Arm {
				how = schema.TouchedRerun
				if ptr.Deref(r.Previous.Recipe) != ptr.Deref(r.New.Recipe) {
					how = schema.TouchedRecipeChanged
				}
			}
			check.Touched = append(check.Touched, schema.TouchedPoint{Curve: c.Key, Conc: r.Previous.Conc, Arm: r.Previous.Arm, How: how})
		}
		for _, d := range c.Dropped {
			check.Touched = append(check.Touched, schema.TouchedPoint{Curve: c.Key, Conc: d.Conc, Arm: d.Arm, How: schema.TouchedRemoved})
		}
	}
	imp.AppendOnly = check
	return check.Touched
}

// AppendOnlyRefusalReason is the abort reason of an append-only run the
// guard refused because it touched published points.
func AppendOnlyRefusalReason(touched []schema.TouchedPoint) string {
	return fmt.Sprintf("the coverage guard refused the run: it is marked append-only but touches %s "+
		"(listed in the report); an append-only run may only add points", wording.Plural(len(touched), "published point", "published points"))
}
