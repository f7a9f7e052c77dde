package report

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestCheckInvariant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary *schema.Summary
		wantErr string
	}{
		{name: "contract example", summary: exampleSummary()},
		{name: "completed with failures", summary: failuresSummary()},
		{name: "empty run", summary: &schema.Summary{}},
		{
			name: "other rows are not checked",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Eval.New = 1000
				return s
			}(),
		},
		{
			name: "a row read but not counted",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Stats.RawBenchmarkRows = 17
				return s
			}(),
			wantErr: "row benchmark: new 8 + duplicate 0 + skipped 8 + unmapped 0 + failed 0 = 16, rawBenchmarkRows is 17",
		},
		{
			name: "a row counted twice",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Benchmark.Duplicate = 1
				return s
			}(),
			wantErr: "= 17, rawBenchmarkRows is 16",
		},
		{name: "nil summary", summary: nil, wantErr: "nil summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckInvariant(tt.summary)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
			if tt.summary != nil {
				require.ErrorIs(t, err, ErrInvariant)
			}
		})
	}
}
