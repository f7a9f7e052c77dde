package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestReport re-renders the stored summary of the demo's newest ingest.
func TestReport(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	requireCode(t, cli.ExitOK, run(t, nil, "demo", "--database-url", db))
	second := run(t, nil, "demo", "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitOK, second)
	secondMD := run(t, nil, "report", "--database-url", db, "--run-id", "28485856738", "--format", "md")
	requireCode(t, cli.ExitOK, secondMD)

	tests := []struct {
		name  string
		args  []string
		vars  map[string]string
		check func(t *testing.T, out string)
	}{
		{"json is the second ingest's summary", []string{"--run-id", "28485856738", "--format", "json"}, nil,
			func(t *testing.T, out string) {
				require.Equal(t, second.stdout, out)
				s := parseSummary(t, out)
				require.Equal(t, demoRerun, s.Rows.Benchmark)
				requireDemoStats(t, s.Stats, 0, 16)
			}},
		{"md by default", []string{"--run-id", "28485856738"}, nil,
			func(t *testing.T, out string) {
				require.True(t, strings.HasPrefix(out, mdMarker+"\n"), out)
				require.Regexp(t, `(?m)^\| benchmark \| 0 +\| 12 +\| 12 +\| 2 +\| 1 +\|$`, out)
				require.Equal(t, secondMD.stdout, out)
			}},
		{"text", []string{"--run-id", "28485856738", "--format", "text"}, nil,
			func(t *testing.T, out string) {
				rep := parseText(t, out)
				require.Equal(t, demoRerun, rep.benchmark)
				require.Equal(t, int64(16), rep.stats["runStatsDuplicate"])
				require.Equal(t, int64(0), rep.stats["runStatsNew"])
				require.Equal(t, int64(27), rep.stats["rawBenchmarkRows"])
			}},
		{"INGEST_RUN_ID", []string{"--format", "json"}, map[string]string{"INGEST_RUN_ID": "28485856738"},
			func(t *testing.T, out string) { require.Equal(t, second.stdout, out) }},
		{"--attempt of the run", []string{"--run-id", "28485856738", "--attempt", "2", "--format", "json"}, nil,
			func(t *testing.T, out string) { require.Equal(t, second.stdout, out) }},
		{"DATABASE_URL", []string{"--run-id", "28485856738", "--format", "json"}, map[string]string{"DATABASE_URL": db},
			func(t *testing.T, out string) { require.Equal(t, second.stdout, out) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"report"}
			if tt.vars["DATABASE_URL"] == "" {
				args = append(args, "--database-url", db)
			}
			r := run(t, tt.vars, append(args, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			tt.check(t, r.stdout)
		})
	}
}

// TestReportNotFound asks for runs the ledger does not hold.
func TestReportNotFound(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	// A dry run leaves no ledger row, so there is nothing to re-render.
	requireCode(t, cli.ExitOK, run(t, nil, "demo", "--database-url", db, "--dry-run"))
	// An empty tree has no benchmark data: it is recorded, and exits 3.
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", "--database-url", db, "--run-id", "123", t.TempDir()))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown run", []string{"--run-id", "424242"}, "ingest: run 424242: no ingest of this run is recorded"},
		{"dry run only", []string{"--run-id", "28485856738"}, "ingest: run 28485856738: no ingest of this run is recorded"},
		{"other attempt", []string{"--run-id", "123", "--attempt", "2"}, "ingest: run 123: no ingest of this run is recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, nil, append([]string{"report", "--database-url", db}, tt.args...)...)
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stderr, tt.want)
			require.Empty(t, r.stdout)
		})
	}
	// The empty tree was recorded as attempt 1, which report finds.
	r := run(t, nil, "report", "--database-url", db, "--run-id", "123", "--attempt", "1", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, int64(123), parseSummary(t, r.stdout).Run.SourceRunID)
}

// TestReportUsage covers bad report command lines, which fail before the
// (unreachable) database is contacted.
func TestReportUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing --run-id", nil, "ingest report: --run-id is required"},
		{"non-numeric --run-id", []string{"--run-id", "abc"}, `ingest report: invalid value "abc" for --run-id: want a positive integer`},
		{"zero --run-id", []string{"--run-id", "0"}, `ingest report: invalid value "0" for --run-id: want a positive integer`},
		{"bad --attempt", []string{"--run-id", "1", "--attempt", "x"}, `ingest report: invalid value "x" for --attempt: want an integer from 1 to 32767`},
		{"bad --format", []string{"--run-id", "1", "--format", "html"}, `ingest report: invalid value "html" for --format: want text|md|json`},
		{"unknown flag", []string{"--run-id", "1", "--bogus"}, "ingest report: unknown flag: --bogus"},
		{"bad --log-level", []string{"--run-id", "1", "--log-level", "loud"}, `ingest report: invalid value "loud" for --log-level: want debug|info|warn|error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, append([]string{"report"}, tt.args...)...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, tt.want)
			require.Empty(t, r.stdout)
		})
	}
}

// TestReportUnknownSchemaVersion: a stored summary whose schemaVersion this
// build does not know (a newer build wrote it) is never rendered as an
// ingest that succeeded: every format says it cannot be read and why, and
// the command exits 1.
func TestReportUnknownSchemaVersion(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", demo, "--database-url", db))
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	_, err = conn.Exec(t.Context(), `UPDATE ingests SET summary = (jsonb_set(summary::jsonb, '{schemaVersion}', '7') || '{"status": "succeeded", "failures": []}')::json`)
	require.NoError(t, err)
	const why = "summary written by a newer build (schemaVersion 7): upgrade ingest to read it"
	for _, format := range []string{"md", "text", "json"} {
		t.Run(format, func(t *testing.T) {
			r := run(t, nil, "report", "--database-url", db, "--run-id", "28485856738", "--format", format)
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stdout, why)
			require.NotContains(t, r.stdout, "Results ingested")
			require.NotContains(t, r.stdout, "✅")
			require.Contains(t, r.stderr, why)
		})
	}
}
