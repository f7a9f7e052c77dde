package cli

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/impact"
)

// coverageOpts are the coverage guard's options: what a run that would
// shrink a published curve gets (warn or refuse), and the curves whose
// loss is acknowledged.
type coverageOpts struct {
	guard  *setting
	accept *setting
}

func addCoverage(s *settings) coverageOpts {
	return coverageOpts{
		guard: s.enum("coverage-guard", "warn", []string{"warn", "refuse"}, "a run that would shrink a published curve (points not measured again, arms, "+
			"the concurrency span, a range or frontier region lost beyond run-to-run noise): warn (report it) or refuse (roll the run back, exit 4)", "INGEST_COVERAGE_GUARD"),
		accept: s.str("accept-coverage-loss", "", "the coverage loss that is deliberate, which the guard lets through: the loss token the report "+
			"gives (loss-…, every curve it lists), all, or comma-separated curve keys", "INGEST_ACCEPT_COVERAGE_LOSS"),
	}
}

// apply puts the options in cfg; a guard mode other than warn or refuse
// is a usage error.
func (o coverageOpts) apply(cfg *ingest.Config) error {
	mode, accept, err := o.values()
	if err != nil {
		return err
	}
	cfg.CoverageGuard, cfg.AcceptCoverageLoss = mode, append(cfg.AcceptCoverageLoss, accept...)
	return nil
}

// values are the guard mode and the acknowledged curve keys; a mode other
// than warn or refuse is a usage error.
func (o coverageOpts) values() (string, []string, error) {
	mode, err := impact.ParseGuard(o.guard.String())
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", o.guard.label(), err)
	}
	var accept []string
	for _, k := range strings.Split(o.accept.String(), ",") {
		if k = strings.TrimSpace(k); k != "" {
			accept = append(accept, k)
		}
	}
	return mode, accept, nil
}
