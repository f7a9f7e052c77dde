package report

import (
	"fmt"

	"github.com/inferencex/ingest/schema"
)

// CheckImpact checks that the impact section's counts match the rows the
// update of latest_benchmarks wrote: points gained + replaced are the rows
// it added, replaced + dropped the rows it removed, and every listed
// curve's points before and after are its replaced, dropped, gained and
// kept points. A summary without an impact, or whose impact is not known,
// has nothing to check.
func CheckImpact(s *schema.Summary) error {
	imp := s.Impact
	if imp == nil || imp.Status == schema.ImpactUnknown {
		return nil
	}
	if got := int64(imp.PointsGained + imp.PointsReplaced); got != imp.RowsAdded {
		return fmt.Errorf("impact: %d gained + %d replaced = %d, latest_benchmarks added %d rows: %w",
			imp.PointsGained, imp.PointsReplaced, got, imp.RowsAdded, ErrInvariant)
	}
	if got := int64(imp.PointsReplaced + imp.PointsDropped); got != imp.RowsRemoved {
		return fmt.Errorf("impact: %d replaced + %d dropped = %d, latest_benchmarks removed %d rows: %w",
			imp.PointsReplaced, imp.PointsDropped, got, imp.RowsRemoved, ErrInvariant)
	}
	var gained, replaced, dropped int
	for _, c := range imp.Curves {
		gained, replaced, dropped = gained+c.GainedCount(), replaced+len(c.Replaced), dropped+len(c.Dropped)
		if c.Before.Points != len(c.Replaced)+len(c.Dropped)+c.Kept || c.After.Points != c.GainedCount()+len(c.Replaced)+c.Kept {
			return fmt.Errorf("impact: curve %s: %d → %d points, but %d gained, %d replaced, %d dropped, %d kept: %w",
				c.Key, c.Before.Points, c.After.Points, c.GainedCount(), len(c.Replaced), len(c.Dropped), c.Kept, ErrInvariant)
		}
	}
	if gained != imp.PointsGained || replaced != imp.PointsReplaced || dropped != imp.PointsDropped {
		return fmt.Errorf("impact: the listed curves have %d gained, %d replaced, %d dropped; the totals say %d, %d, %d: %w",
			gained, replaced, dropped, imp.PointsGained, imp.PointsReplaced, imp.PointsDropped, ErrInvariant)
	}
	return nil
}
