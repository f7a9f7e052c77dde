package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestProgressLine(t *testing.T) {
	tests := []struct {
		name  string
		c     schema.BackfillCounts
		eta   time.Duration
		what  string
		width int
		want  string
	}{
		{"nothing queued", schema.BackfillCounts{}, 0, "", 10, "[>         ] 0/0 runs"},
		{"nothing done", schema.BackfillCounts{Total: 7, Pending: 7}, 0, "run 9", 10, "[>         ] 0/7 runs  run 9"},
		{"half", schema.BackfillCounts{Total: 10, Pending: 5, Ingested: 3, Skipped: 2}, time.Minute, "", 10,
			"[=====>    ] 5/10 runs  ETA 1m0s"},
		{"rounds down", schema.BackfillCounts{Total: 3, Pending: 1, Ingested: 2}, 0, "", 10, "[======>   ] 2/3 runs"},
		{"failures count as done", schema.BackfillCounts{Total: 50, Pending: 27, Ingested: 20, Failed: 3}, 2*time.Minute + 9600*time.Millisecond,
			"run 123", 10, "[====>     ] 23/50 runs  3 failed  ETA 2m10s  run 123"},
		{"one short of full", schema.BackfillCounts{Total: 10, Pending: 1, Ingested: 9}, 0, "", 10, "[=========>] 9/10 runs"},
		{"all done", schema.BackfillCounts{Total: 4, Ingested: 3, Skipped: 1}, 0, "", 10, "[==========] 4/4 runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, backfillLine(tc.c, tc.eta, tc.what, tc.width))
		})
	}
}
