package report

import (
	"errors"
	"fmt"

	"github.com/inferencex/ingest/schema"
)

// ErrInvariant is wrapped by CheckInvariant when a row does not account for
// every item read.
var ErrInvariant = errors.New("row counts do not add up to items read")

// CheckInvariant checks that every item read landed in exactly one column:
// for the benchmark row, new + duplicate + skipped + unmapped + failed must
// equal Stats.RawBenchmarkRows, and for the power row Details.PowerSeriesRead
// when the summary carries it. The other rows have no items-read counter
// yet and are not checked.
func CheckInvariant(s *schema.Summary) error {
	if s == nil {
		return errors.New("summary invariant: nil summary")
	}
	c := s.Rows.Benchmark
	if got, want := c.Total(), s.Stats.RawBenchmarkRows; got != want {
		return fmt.Errorf("row %s: new %d + duplicate %d + skipped %d + unmapped %d + failed %d = %d, rawBenchmarkRows is %d: %w",
			schema.CategoryBenchmark, c.New, c.Duplicate, c.Skipped, c.Unmapped, c.Failed, got, want, ErrInvariant)
	}
	// Summaries written before the power row had its counter carry none.
	p := s.Rows.Power
	if got, want := p.Total(), s.Details.PowerSeriesRead; want != 0 && got != want {
		return fmt.Errorf("row %s: new %d + duplicate %d + skipped %d + unmapped %d + failed %d = %d, powerSeriesRead is %d: %w",
			schema.CategoryPower, p.New, p.Duplicate, p.Skipped, p.Unmapped, p.Failed, got, want, ErrInvariant)
	}
	return nil
}
