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
			name: "rows without an items-read counter are not checked",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Eval.New = 1000
				return s
			}(),
		},
		{
			name: "eval row adds up",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Eval = schema.Counts{New: 3, Duplicate: 3, Skipped: 1}
				s.Details.EvalRows = 7
				return s
			}(),
		},
		{
			name: "eval row short of its items",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Eval = schema.Counts{New: 3, Duplicate: 3}
				s.Details.EvalRows = 7
				return s
			}(),
			wantErr: "row eval: new 3 + duplicate 3 + skipped 0 + unmapped 0 + failed 0 = 6, evalRows is 7",
		},
		{
			name: "trace row over its items",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Trace = schema.Counts{New: 3, Skipped: 1, Failed: 1}
				s.Details.TraceRowsRead = 4
				return s
			}(),
			wantErr: "row trace: new 3 + duplicate 0 + skipped 1 + unmapped 0 + failed 1 = 5, traceRowsRead is 4",
		},
		{
			name: "trace row adds up",
			summary: func() *schema.Summary {
				s := exampleSummary()
				s.Rows.Trace = schema.Counts{Duplicate: 3, Skipped: 1}
				s.Details.TraceRowsRead = 4
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
