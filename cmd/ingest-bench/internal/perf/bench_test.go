package perf_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/cmd/ingest-bench/internal/perf"
	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// tinyOptions hold every artifact kind: retried points, evals with
// samples and a changelog, AgentX traces in every layout (two multinode),
// telemetry with nvidia-smi and DCGM power audits, zipped artifacts.
var tinyOptions = generate.Options{Points: 30, Seed: 5, Retries: 3, Evals: 2, EvalDocs: 4, AgentX: 7, Telemetry: true, PowerAudits: true, Zip: true}

// designed sums the manifests of the runs the bench generates (seed+i,
// run id+i), written here independently of the bench.
func designed(t *testing.T, runs int, opts generate.Options) []generate.Manifest {
	t.Helper()
	var out []generate.Manifest
	for i := 0; i < runs; i++ {
		o := opts
		o.Seed += int64(i)
		o.RunID = generate.DefaultRunID + int64(i)
		m, err := generate.Write(t.TempDir(), o)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// The bench ingests every run twice; what each pass's reports count is
// what the generator designed, the checks pass, the printed table shows
// those counts, and the database is dropped afterwards.
func TestBenchCountsMatchTheManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests generated runs end to end: not under -short")
	}
	ctx := context.Background()
	const runs = 2
	res, err := perf.Run(ctx, perf.Config{Runs: runs, Gen: tinyOptions, AdminURL: pgtest.AdminURL(), DatabasePrefix: pgtest.KindPrefix(t, "bench"), Dir: t.TempDir(), Log: zaptest.NewLogger(t)})
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.Len(t, res.Passes, 2)

	var want perf.Counts
	audits := 0
	for _, m := range designed(t, runs, tinyOptions) {
		audits += m.PowerAuditSeries
		want.BenchmarkRows += int64(m.RawBenchmarkRows)
		want.BenchmarkPoints += int64(m.Points)
		want.EvalRows += int64(m.EvalRows)
		want.EvalSamples += int64(m.EvalSampleLines)
		want.TraceRows += int64(m.AgenticPoints)
		want.Traces += int64(m.AgentXTraces)
		want.TraceRecords += m.AgentXProfileRecords
		want.TraceBytes += m.AgentXProfileBytes
		want.TelemetrySamples += m.TelemetrySamples
		want.PowerSeries += int64(m.TelemetrySeries)
		want.ChangelogEntries += int64(m.ChangelogEntries)
	}
	require.Equal(t, want, res.Designed)
	require.Positive(t, want.Traces)
	require.Positive(t, want.TelemetrySamples)
	require.Positive(t, want.ChangelogEntries)
	require.Positive(t, audits, "nvidia-smi power audits among the telemetry")
	first, rerun := res.Passes[0], res.Passes[1]
	require.Equal(t, "first", first.Name)
	require.Equal(t, want, first.Counts, "the first pass stored everything designed")
	wantRerun := want
	wantRerun.TelemetrySamples, wantRerun.ChangelogEntries = 0, 0 // written on the first pass only
	require.Equal(t, wantRerun, rerun.Counts, "the rerun found everything unchanged")
	for _, stage := range []string{"benchmarks", "evals", "traces", "telemetry", "changelog", "commit"} {
		require.Contains(t, first.Stages, stage, "first pass")
	}
	// Both runs' inputs and the data are unchanged: each rerun is answered
	// from the ledger.
	require.Len(t, rerun.Stages, 1, "%v", rerun.Stages)
	require.Contains(t, rerun.Stages, "unchanged")

	var out bytes.Buffer
	require.NoError(t, perf.Render(&out, res, "md"))
	text := out.String()
	for _, row := range []string{
		"| benchmark rows read | " + group(want.BenchmarkRows) + " | benchmarks |",
		"| eval samples | " + group(want.EvalSamples) + " | evals |",
		"| AgentX traces | " + group(want.Traces) + " | traces |",
		"| trace records | " + group(want.TraceRecords) + " | traces |",
		"| GPU-metric samples | " + group(want.TelemetrySamples) + " | telemetry |",
		"| power series | " + group(want.PowerSeries) + " | telemetry |",
		"| changelog entries | " + group(want.ChangelogEntries) + " | changelog |",
	} {
		require.Contains(t, text, row)
	}
	require.Contains(t, text, "checks: every report adds up")

	conn, err := pgx.Connect(ctx, pgtest.AdminURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	var exists bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", res.Database).Scan(&exists))
	require.False(t, exists, "the bench database is dropped")
	require.True(t, strings.HasPrefix(res.Database, pgtest.KindPrefix(t, "bench")), "named with the tests' prefix: %s", res.Database)
	left, err := filepath.Glob(filepath.Join(res.TreesDir, "*"))
	require.NoError(t, err)
	require.Empty(t, left, "the trees are removed")
}

// group is the table's digit grouping (12 345), for the expected rows.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	return string(out)
}
