package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestLoadClean loads generated trees that are designed to load without a
// failure and checks the counts their manifest states.
func TestLoadClean(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts generate.Options
	}{
		{"folders", generate.Options{Points: 4, Seed: 1}},
		{"zips", generate.Options{Points: 3, Seed: 2, Zip: true}},
		{"stale attempt", generate.Options{Points: 3, Seed: 3, Retries: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, m := genTree(t, tt.opts)
			db := pgtest.New(t)
			r := run(t, nil, "load", dir, "--database-url", db, "--format", "json")
			requireCode(t, cli.ExitOK, r)
			s := parseSummary(t, r.stdout)
			require.Equal(t, schema.StatusSucceeded, s.Status)
			require.Equal(t, schema.Counts{New: int64(m.Points), Skipped: int64(m.AggregateRows + m.StaleRows)}, s.Rows.Benchmark)
			require.Equal(t, int64(m.BenchmarkFiles), s.Stats.BenchmarkFiles)
			require.Equal(t, int64(m.RawBenchmarkRows), s.Stats.RawBenchmarkRows)
			require.Equal(t, int64(m.AggregateRows), s.Stats.CoveredByPerJobFiles)
			require.Equal(t, int64(m.RunStatsKeys), s.Stats.RunStatsNew)
			require.Empty(t, s.Failures)
			require.True(t, s.Unmapped.Empty())
			require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"))
			require.Equal(t, []int64{s.IngestID}, queryInt64s(t, db, "SELECT id FROM ingests WHERE status = 'succeeded'"))

			again := run(t, nil, "load", dir, "--database-url", db, "--format", "json")
			requireCode(t, cli.ExitOK, again)
			s2 := parseSummary(t, again.stdout)
			require.Equal(t, schema.Counts{Duplicate: int64(m.Points), Skipped: int64(m.AggregateRows + m.StaleRows)}, s2.Rows.Benchmark)
			require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"))
		})
	}
}

// TestLoadMalformedFile breaks one per-job file: the run is written without
// it and the command exits 3.
func TestLoadMalformedFile(t *testing.T) {
	t.Parallel()
	dir, m := genTree(t, generate.Options{Points: 4, Seed: 1})
	broken := truncateOnePerJobFile(t, dir)
	db := pgtest.New(t)

	r := run(t, nil, "load", dir, "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.NotContains(t, r.stderr, "aborted")
	s := parseSummary(t, r.stdout)
	require.Equal(t, schema.StatusCompletedWithFailures, s.Status)
	require.Equal(t, int64(1), s.Rows.Benchmark.Failed)
	require.Len(t, s.Failures, 1)
	require.Equal(t, broken, s.Failures[0].Artifact)
	require.Equal(t, int64(m.RawBenchmarkRows), s.Rows.Benchmark.Total(), "every raw row lands in exactly one column")
	// The broken point's aggregate copy still carries it; every other
	// point comes from its own file.
	require.Equal(t, int64(m.Points), s.Rows.Benchmark.New)
	require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"), "the rest of the run landed")
	require.Equal(t, []int64{s.IngestID}, queryInt64s(t, db, "SELECT id FROM ingests WHERE status = 'completed_with_failures'"))

	text := run(t, nil, "load", dir, "--database-url", db)
	requireCode(t, cli.ExitCompletedWithFailures, text)
	require.Contains(t, text.stdout, ", with 1 failure.")
	require.Contains(t, text.stdout, "failures (1):\n  "+broken+" / ")
}

// TestLoadAborted covers ingests that write nothing: exit 1 and a message
// on stderr.
func TestLoadAborted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		vars       map[string]string
		ownDB      bool // pass a fresh database with --database-url
		wantStderr []string
		notStderr  string
		wantReport bool // an aborted report is printed on stdout
	}{
		{name: "--run-id is not the run in artifacts.json", args: []string{"--run-id", "999"}, ownDB: true,
			wantStderr: []string{"ingest: aborted: artifacts.json describes run 28485856738, not run 999: the tree belongs to another run"},
			wantReport: true},
		{name: "INGEST_RUN_ID is not the run in artifacts.json", vars: map[string]string{"INGEST_RUN_ID": "999"}, ownDB: true,
			wantStderr: []string{"ingest: aborted: artifacts.json describes run 28485856738, not run 999"},
			wantReport: true},
		{name: "unreachable database", args: []string{"--database-url", unreachableURL},
			wantStderr: []string{"ingest: connect to postgres://***@127.0.0.1:1/nowhere: ", "connection refused"}},
		{name: "database password stays out of the message",
			vars:       map[string]string{"DATABASE_URL": "postgres://postgres:s3cret-pw@127.0.0.1:1/nowhere?sslmode=disable"},
			wantStderr: []string{"ingest: connect to postgres://***@127.0.0.1:1/nowhere: "}, notStderr: "s3cret-pw"},
		// An unparsable --database-url is a usage error (exit 2): TestDatabaseURLUnparseable.
		{name: "missing catalog extension", args: []string{"--catalog", "/nonexistent/catalog.json"}, ownDB: true,
			wantStderr: []string{"ingest: --catalog: open /nonexistent/catalog.json: no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := genTree(t, generate.Options{Points: 2, Seed: 5})
			args := append([]string{"load", dir}, tt.args...)
			var db string
			if tt.ownDB {
				db = pgtest.New(t)
				args = append(args, "--database-url", db)
			}
			r := run(t, tt.vars, args...)
			requireCode(t, cli.ExitAborted, r)
			for _, want := range tt.wantStderr {
				require.Contains(t, r.stderr, want)
			}
			if tt.notStderr != "" {
				require.NotContains(t, r.stderr+r.stdout, tt.notStderr)
			}
			if tt.wantReport {
				require.Contains(t, r.stdout, "Ingest report — ❌ Ingest failed: ")
				require.Contains(t, r.stdout, "Nothing was written.")
			} else {
				require.Empty(t, r.stdout)
			}
			if db != "" {
				for _, table := range []string{"benchmark_results", "workflow_runs", "run_stats", "configs"} {
					require.Zero(t, count(t, db, table), "rows in %s", table)
				}
			}
		})
	}
}

// TestLoadMissingTreeDirectory points load at a directory that does not
// exist: a usage error, before the database is touched.
func TestLoadMissingTreeDirectory(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	missing := filepath.Join(t.TempDir(), "no-such-tree")
	r := run(t, nil, "load", missing, "--database-url", db)
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, "is not a directory")
	require.Zero(t, count(t, db, "ingests"))
}

// TestLoadFlagsAfterTheTree: flags are honoured wherever the tree stands,
// and a second positional argument is a usage error.
func TestLoadFlagsAfterTheTree(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	dir := t.TempDir()
	_, err := generate.Write(dir, generate.Options{Points: 3, Seed: 1})
	require.NoError(t, err)

	r := run(t, nil, "load", "--database-url", db, dir, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Zero(t, count(t, db, "benchmark_results"), "--dry-run after the tree still applies")

	r = run(t, nil, "load", dir, "extra", "--database-url", db)
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `unexpected argument "extra"`)
	require.Zero(t, count(t, db, "ingests"))
}

// TestLoadSideFileErrorAfterCommit: the run is written, so a report file
// that cannot be written is not an abort.
func TestLoadSideFileErrorAfterCommit(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	dir := t.TempDir()
	_, err := generate.Write(dir, generate.Options{Points: 3, Seed: 1})
	require.NoError(t, err)
	r := run(t, nil, "load", dir, "--database-url", db, "--summary-json", filepath.Join(t.TempDir(), "missing", "s.json"))
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stderr, "--summary-json")
	require.EqualValues(t, 3, count(t, db, "benchmark_results"))
}

// TestLoadUsage covers bad command lines. The database is unreachable: a
// usage error is found before connecting, or the exit code would be 1.
func TestLoadUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		vars       map[string]string
		wantStderr string
	}{
		{"no tree", nil, nil, "ingest load: the run tree is required (ingest load DIR, or INGEST_ARTIFACTS_PATH)"},
		{"unknown flag", []string{dir, "--bogus"}, nil, "ingest load: unknown flag: --bogus\nRun 'ingest load --help' for usage.\n"},
		{"flag without its value", []string{dir, "--run-id"}, nil, "ingest load: flag needs an argument: --run-id"},
		{"bad --format", []string{dir, "--format", "xml"}, nil, `ingest load: invalid value "xml" for --format: want text|md|json`},
		{"bad INGEST_REPORT_FORMAT", []string{dir}, map[string]string{"INGEST_REPORT_FORMAT": "yaml"}, `ingest load: invalid value "yaml" for --format (from INGEST_REPORT_FORMAT): want text|md|json`},
		{"non-numeric --run-id", []string{dir, "--run-id", "abc"}, nil, `invalid value "abc" for --run-id: want a positive integer`},
		{"zero --run-id", []string{dir, "--run-id", "0"}, nil, `invalid value "0" for --run-id: want a positive integer`},
		{"negative --attempt", []string{dir, "--attempt", "-1"}, nil, `invalid value "-1" for --attempt: want an integer from 1 to 32767`},
		{"--attempt out of range", []string{dir, "--attempt", "40000"}, nil, `invalid value "40000" for --attempt: want an integer from 1 to 32767`},
		{"bad --run-date", []string{dir, "--run-date", "yesterday"}, nil, `ingest: --run-date: "yesterday" is neither RFC 3339 nor YYYY-MM-DD`},
		{"bad --log-level", []string{dir, "--log-level", "loud"}, nil, `invalid value "loud" for --log-level: want debug|info|warn|error`},
		{"bad INGEST_LOG_FORMAT", []string{dir}, map[string]string{"INGEST_LOG_FORMAT": "xml"}, `invalid value "xml" for --log-format (from INGEST_LOG_FORMAT): want console|json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"DATABASE_URL": unreachableURL}
			for k, v := range tt.vars {
				vars[k] = v
			}
			r := run(t, vars, append([]string{"load"}, tt.args...)...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, tt.wantStderr)
			require.NotContains(t, r.stderr, "connect to")
			require.Empty(t, r.stdout)
		})
	}
}

// TestLoadDryRun runs a dry run on a fresh database and after a real
// ingest: it reports the would-be counts and leaves no trace.
func TestLoadDryRun(t *testing.T) {
	t.Parallel()
	dir, m := genTree(t, generate.Options{Points: 4, Seed: 11})
	db := pgtest.New(t)
	tables := []string{"benchmark_results", "ingests", "workflow_runs", "run_stats", "configs", "availability"}

	r := run(t, nil, "load", dir, "--database-url", db, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.True(t, strings.HasPrefix(r.stdout, "Ingest report — 🔎 Dry run — nothing was written.\n"), r.stdout)
	rep := parseText(t, r.stdout)
	require.Equal(t, schema.Counts{New: int64(m.Points), Skipped: int64(m.AggregateRows)}, rep.benchmark)
	require.Equal(t, int64(m.RawBenchmarkRows), rep.stats["rawBenchmarkRows"])
	require.Equal(t, int64(m.RunStatsKeys), rep.stats["runStatsNew"])
	for _, table := range tables {
		require.Zero(t, count(t, db, table), "rows in %s after a dry run", table)
	}

	requireCode(t, cli.ExitOK, run(t, nil, "load", dir, "--database-url", db))
	require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"))
	require.Equal(t, int64(1), count(t, db, "ingests"))

	dry := run(t, nil, "load", dir, "--database-url", db, "--dry-run", "--format", "json")
	requireCode(t, cli.ExitOK, dry)
	s := parseSummary(t, dry.stdout)
	require.True(t, s.DryRun)
	require.Zero(t, s.IngestID, "a dry run has no ledger row")
	require.Equal(t, schema.Counts{Duplicate: int64(m.Points), Skipped: int64(m.AggregateRows)}, s.Rows.Benchmark)
	require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"))
	require.Equal(t, int64(1), count(t, db, "ingests"), "the dry run added no ledger row")
}

// TestLoadRecordsToolVersion checks that the ledger records the build the
// ingest ran with, exactly as `ingest version` prints it.
func TestLoadRecordsToolVersion(t *testing.T) {
	t.Parallel()
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 11})
	db := pgtest.New(t)
	v := run(t, nil, "version")
	requireCode(t, cli.ExitOK, v)
	printed := strings.TrimPrefix(strings.TrimSuffix(v.stdout, "\n"), "ingest ")
	require.NotEmpty(t, printed)

	r := run(t, nil, "load", dir, "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var recorded string
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT tool_version FROM ingests").Scan(&recorded))
	require.Equal(t, printed, recorded)
}
