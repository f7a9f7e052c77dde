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
// new + duplicate + skipped + unmapped + failed equals the row's items-read
// counter — Stats.RawBenchmarkRows for the benchmark row, Details.EvalRows
// for evals, Details.TraceRowsRead for traces and Details.PowerSeriesRead
// for power. The benchmark row is always checked; the others when their
// counter is set, since summaries stored before a row had a counter carry
// none (and a row with nothing read has nothing to check). The impact
// section is checked too (CheckImpact).
func CheckInvariant(s *schema.Summary) error {
	if s == nil {
		return errors.New("summary invariant: nil summary")
	}
	rows := []struct {
		cat     schema.Category
		counts  schema.Counts
		read    int64
		counter string
		always  bool
	}{
		{schema.CategoryBenchmark, s.Rows.Benchmark, s.Stats.RawBenchmarkRows, "rawBenchmarkRows", true},
		{schema.CategoryEval, s.Rows.Eval, s.Details.EvalRows, "evalRows", false},
		{schema.CategoryTrace, s.Rows.Trace, s.Details.TraceRowsRead, "traceRowsRead", false},
		{schema.CategoryPower, s.Rows.Power, s.Details.PowerSeriesRead, "powerSeriesRead", false},
	}
	for _, r := range rows {
		if !r.always && r.read == 0 {
			continue
		}
		c := r.counts
		if got := c.Total(); got != r.read {
			return fmt.Errorf("row %s: new %d + duplicate %d + skipped %d + unmapped %d + failed %d = %d, %s is %d: %w",
				r.cat, c.New, c.Duplicate, c.Skipped, c.Unmapped, c.Failed, got, r.counter, r.read, ErrInvariant)
		}
	}
	return CheckImpact(s)
}
