package cli_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// BenchmarkBackfill backfills the 50 runs of the acceptance test from the
// fake GitHub into a fresh database with 1, 2 and 3 worker processes, and
// reports runs per second (download, ingest and queue included).
//
//	go test ./ingest/cli -run '^$' -bench Backfill -benchtime 3x
func BenchmarkBackfill(b *testing.B) {
	fake, ids := backfillFake(b)
	for _, workers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				db := pgtest.New(b)
				cache := b.TempDir()
				b.StartTimer()
				started := time.Now()
				var ws []*worker
				for i := range workers {
					vars := backfillVars(fake, db, cache)
					vars["INGEST_BACKFILL_WORKER"] = fmt.Sprintf("bench-%d", i+1)
					ws = append(ws, startWorker(b, vars, "backfill"))
				}
				for _, w := range ws {
					require.Equal(b, cli.ExitOK, w.wait(b), "stderr:\n%s", w.stderr.String())
				}
				total += time.Since(started)
				b.StopTimer()
				require.Equal(b, len(ids), int(count(b, db, "ingests")))
				b.StartTimer()
			}
			b.ReportMetric(float64(len(ids)*b.N)/total.Seconds(), "runs/s")
		})
	}
}
