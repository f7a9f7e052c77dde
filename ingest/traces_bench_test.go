package ingest_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
)

// BenchmarkAgentXTrace ingests one generated AgentX point whose
// profile_export.jsonl is INGEST_TRACE_BENCH_MB megabytes (default 500),
// into an empty database and then again (the rerun hashes the files and
// sends nothing). It reports MB/s of profile per ingest and the peak
// memory of the Go runtime (everything it mapped, heap and stacks) and of
// the live heap while ingesting. The tree is generated under the test's
// temporary directory and deleted afterwards.
//
//	go test ./ingest -run '^$' -bench AgentXTrace -benchtime 1x
func BenchmarkAgentXTrace(b *testing.B) {
	mb := 500
	if v := os.Getenv("INGEST_TRACE_BENCH_MB"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err)
		mb = n
	}
	dir := b.TempDir()
	started := time.Now()
	require.NoError(b, generate.WriteAgentXRun(dir, agentxRunID, []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 64, ProfileBytes: int64(mb) << 20, MetricsSeconds: 3600},
	}))
	profiles, err := filepath.Glob(filepath.Join(dir, "agentic_*", "aiperf_artifacts", "profile_export.jsonl"))
	require.NoError(b, err)
	require.Len(b, profiles, 1)
	info, err := os.Stat(profiles[0])
	require.NoError(b, err)
	size := float64(info.Size()) / (1 << 20)
	b.Logf("generated a %.0f MiB profile_export.jsonl in %s", size, time.Since(started).Round(time.Millisecond))

	for _, rerun := range []bool{false, true} {
		name := "first"
		if rerun {
			name = "rerun"
		}
		b.Run(name, func(b *testing.B) {
			var peakTotal, peakLive uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sum := measureIngest(b, dir, rerun, &peakLive, &peakTotal).sum
				if rerun {
					require.EqualValues(b, 1, sum.Rows.Trace.Duplicate)
					require.Zero(b, sum.Details.TraceBlobBytesNew)
				} else {
					require.EqualValues(b, 1, sum.Rows.Trace.New)
					b.Logf("stored %.1f MiB compressed", float64(sum.Details.TraceBlobBytesNew)/(1<<20))
				}
			}
			secs := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(size/secs, "MB/s")
			b.ReportMetric(float64(peakTotal)/(1<<20), "peak-go-MiB")
			b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-heap-MiB")
			b.ReportMetric(size, "profile-MiB")
		})
	}
}
