package runstate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestTallyCountsFailuresPastTheList: failures past the list's bound are
// counted exactly, those that belong to no row included (50,000 missing
// artifacts are 50,000 failures, not the 10,000 listed).
func TestTallyCountsFailuresPastTheList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		run, benchmark     int
		wantCount          int64
		wantNotListed      int64
		wantRunNotListed   int64
		wantListedFailures int
	}{
		{"under the bound", 3, 0, 3, 0, 0, 3},
		{"50,000 missing artifacts", 50000, 0, 50000, 40000, 40000, maxFailures},
		{"row failures first, run failures past the bound", 2000, maxFailures, 2000, 2000, 2000, maxFailures},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sum := &schema.Summary{}
			tl := NewTally(sum)
			for i := range tt.benchmark {
				tl.Fail(schema.CategoryBenchmark, fmt.Sprintf("bmk_%d", i), "f.json", "bad")
			}
			for i := range tt.run {
				tl.Fail(schema.CategoryRun, fmt.Sprintf("bmk_missing_%d", i), "", "listed but missing")
			}
			tl.Close()
			require.Len(t, sum.Failures, tt.wantListedFailures)
			require.Equal(t, tt.wantNotListed, sum.Details.FailuresNotListed)
			require.Equal(t, tt.wantRunNotListed, sum.Details.RunFailuresNotListed)
			require.Equal(t, tt.wantCount, sum.FailureCount(), "row cells are counted by the stages, not here")
		})
	}
}
