package cli_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestDemo runs the demo twice into one database and checks the counts
// fixtures/DEMO.md designs, in each report format.
func TestDemo(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)

	first := run(t, nil, "demo", "--database-url", db)
	requireCode(t, cli.ExitOK, first) // the designed failures do not fail the demo
	// stderr is not a terminal: no progress line, not a byte of one.
	require.NotContains(t, first.stderr, "\r")
	require.NotContains(t, first.stderr, "\033[K")
	require.Contains(t, first.stderr, "ingest started", "info logs when stderr is not a terminal")
	require.Regexp(t, `stage finished\t\{"stage": "benchmarks", "took": "[0-9.]+(µs|ms|s)"\}`, first.stderr,
		"console logs print durations with their unit")
	require.Contains(t, first.stdout, "Ingest report — ⚠️ Results ingested into the production database, with 2 failures.")
	require.Contains(t, first.stdout, "source run 28485856738 attempt 2 of SemiAnalysisAI/InferenceX")
	rep := parseText(t, first.stdout)
	require.Equal(t, demoFirst, rep.benchmark)
	for name, want := range map[string]int64{
		"benchmarkFiles": 17, "rawBenchmarkRows": 27, "coveredByPerJobFiles": 9,
		"failedRunRows": 2, "runStatsNew": 16, "runStatsDuplicate": 0,
		"gpuMetricSamplesNew": 19272, "powerPublicationPoints": 7,
	} {
		require.Equal(t, want, rep.stats[name], "stats %s in\n%s", name, first.stdout)
	}
	require.Contains(t, first.stdout, "unmapped hardware: a100-lab")
	require.Contains(t, first.stdout, "failures (2):") // the malformed benchmark file and a ragged telemetry CSV
	require.Contains(t, first.stdout, "power warnings (1):")
	require.Contains(t, first.stdout, "_conc1024_b200-dgxc_09_")
	require.Equal(t, int64(12), count(t, db, "benchmark_results"))
	require.Equal(t, int64(16), count(t, db, "run_stats"))

	second := run(t, nil, "demo", "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitOK, second)
	sum := parseSummary(t, second.stdout)
	require.Equal(t, demoRerun, sum.Rows.Benchmark)
	requireDemoStats(t, sum.Stats, 0, 16)
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	require.Equal(t, schema.RunIdentity{Repo: "SemiAnalysisAI/InferenceX", SourceRunID: demoRunID, SourceRunAttempt: 2,
		MergeRunID: demoRunID, MergeRunAttempt: 2}, sum.Run)
	require.Equal(t, []string{"a100-lab"}, sum.Unmapped.Hardware)
	require.Len(t, sum.Failures, 2)
	require.Equal(t, "production", sum.Target)
	require.False(t, sum.DryRun)
	require.NotZero(t, sum.IngestID)
	require.Equal(t, int64(12), count(t, db, "benchmark_results"), "a rerun adds no rows")

	third := run(t, nil, "demo", "--database-url", db, "--format", "md")
	requireCode(t, cli.ExitOK, third)
	require.True(t, strings.HasPrefix(third.stdout, "<!-- ingest-report source-run=28485856738 -->\n"),
		"Markdown report starts with its marker:\n%s", third.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^\| benchmark \| 0 +\| 12 +\| 12 +\| 2 +\| 1 +\|$`), third.stdout)
	require.Contains(t, third.stdout, "runStatsNew 0, runStatsDuplicate 16")

	require.Equal(t, []int64{demoRunID, demoRunID, demoRunID},
		queryInt64s(t, db, "SELECT github_run_id FROM ingests WHERE status = 'completed_with_failures' ORDER BY id"),
		"one ledger row per demo")
}

// TestDemoJSONFirstIngest checks the JSON report of a first ingest.
func TestDemoJSONFirstIngest(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	r := run(t, nil, "demo", "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	sum := parseSummary(t, r.stdout)
	require.Equal(t, demoFirst, sum.Rows.Benchmark)
	requireDemoStats(t, sum.Stats, 16, 0)
	require.Equal(t, sum.Stats.RawBenchmarkRows, sum.Rows.Benchmark.Total(), "every raw row lands in exactly one column")
	require.Equal(t, "listing", sum.Details.AttemptOrder)
}

// TestDemoCreatesDatabase checks that demo creates a database that does
// not exist yet, migrates it and ingests into it.
func TestDemoCreatesDatabase(t *testing.T) {
	t.Parallel()
	base := pgtest.New(t)
	name := dbName(t, base) + "_demo"
	db := withDatabase(t, base, name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgtest.AdminURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})

	r := run(t, nil, "demo", "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	sum := parseSummary(t, r.stdout)
	require.Equal(t, demoFirst, sum.Rows.Benchmark)
	require.Equal(t, "production", sum.Target)
	require.Equal(t, int64(12), count(t, db, "benchmark_results"))
	require.Zero(t, count(t, base, "benchmark_results"))
}
