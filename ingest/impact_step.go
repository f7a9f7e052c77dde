package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/schema"
)

// ErrCoverageRefused is wrapped by Run's error when the coverage guard
// (Config.CoverageGuard refuse) rolled the run back: it would shrink a
// published curve and the loss was not acknowledged.
var ErrCoverageRefused = errors.New("coverage guard refused the run")

// noteImpact computes what the run does to the published dashboard, inside
// its transaction after the update of latest_benchmarks (view), into
// sum.Impact with the run's eval evidence (evals, completed with
// thresholds and published scores), and applies the coverage guard
// (judgeCurves): an error wrapping ErrCoverageRefused when it refuses the
// run. A run marked append-only (sum.Details.AppendOnly) is checked to
// only add points.
func noteImpact(ctx context.Context, guard string, accept []string, w RunWriter, view schema.ViewRefresh, sum *schema.Summary,
	evals []schema.EvalEvidence) error {
	curves, err := w.CurveImpact(ctx)
	if err != nil {
		return fmt.Errorf("impact on latest_benchmarks: %w", err)
	}
	imp, refused, err := judgeCurves(guard, accept, sum.Details.AppendOnly, curves, view)
	if err != nil {
		return err
	}
	if len(evals) > 0 {
		published, err := w.PublishedEvalScores(ctx, impact.EvalTasks(evals))
		if err != nil {
			return err
		}
		thresholds, err := impact.LoadThresholds()
		if err != nil {
			return err
		}
		imp.Evals = impact.Evidence(evals, thresholds, published)
	}
	sum.Impact = imp
	return refused
}

// judgeCurves computes what a write did to the curves of latest_benchmarks
// it touched (curves, after the update whose outcome is view) and applies
// the coverage guard (mode guard; accept: the curve keys whose loss is
// acknowledged, by flag or override entry). A write of an append-only run
// (appendOnly) must only add points: under refuse one that replaces,
// re-runs or drops a published point is refused first. refused wraps
// ErrCoverageRefused, with imp.Refused set, when the guard refuses the
// write; err is a failure to judge it.
func judgeCurves(guard string, accept []string, appendOnly bool, curves []schema.CurveImpact, view schema.ViewRefresh) (imp *schema.Impact, refused, err error) {
	if imp, err = impact.Compute(curves, view); err != nil {
		return nil, nil, fmt.Errorf("impact on latest_benchmarks: %w", err)
	}
	mode, err := impact.ParseGuard(guard)
	if err != nil {
		return nil, nil, err
	}
	open := impact.Guard(imp, mode, accept)
	var touched []schema.TouchedPoint
	if appendOnly {
		touched = impact.CheckAppendOnly(imp)
	}
	if mode != schema.CoverageGuardRefuse {
		return imp, nil, nil
	}
	switch {
	case len(touched) > 0:
		imp.Refused = true
		return imp, fmt.Errorf("%s: %w", impact.AppendOnlyRefusalReason(touched), ErrCoverageRefused), nil
	case len(open) > 0:
		imp.Refused = true
		return imp, fmt.Errorf("%s: %w", impact.RefusalReason(open), ErrCoverageRefused), nil
	}
	return imp, nil, nil
}
