package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// tputPattern is the throughput field of a generated benchmark row.
var tputPattern = regexp.MustCompile(`"tput_per_gpu": [0-9.eE+-]+`)

// queryStrings returns the single text column of a query's rows.
func queryStrings(t *testing.T, dbURL, sql string, args ...any) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), sql, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// ledgerTargets is the target of every ingest in the ledger at dbURL,
// oldest first.
func ledgerTargets(t *testing.T, dbURL string) []string {
	t.Helper()
	return queryStrings(t, dbURL, "SELECT target FROM ingests ORDER BY id")
}

// TestTargetUnknownIsUsage: a target nobody configured is a usage error
// (exit 2) naming the variable that would configure it, before the tree or
// any database is touched: the production database stays empty, and the
// generic DATABASE_URL is never taken for a staging target.
func TestTargetUnknownIsUsage(t *testing.T) {
	t.Parallel()
	prod := pgtest.New(t)
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: 28400002801})
	for _, args := range [][]string{
		{"load", dir, "--target", "staging"},
		{"status", "--target", "staging"},
		{"load", dir, "--target", "Bad Name"},
	} {
		r := run(t, map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL": prod}, args...)
		requireCode(t, cli.ExitUsage, r)
		require.NotContains(t, r.stderr, prod)
		if args[len(args)-1] == "staging" {
			require.Contains(t, r.stderr, `unknown target "staging": set DATABASE_WRITE_URL_STAGING`)
		}
	}
	require.Zero(t, count(t, prod, "ingests"), "a usage error wrote to production")

	// A targets file naming staging by a variable that is not set: still a usage error.
	file := filepath.Join(t.TempDir(), "targets.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"staging": {"urlEnv": "STAGING_URL"}}`), 0o644))
	r := run(t, map[string]string{"DATABASE_URL": prod, "INGEST_TARGETS_FILE": file}, "load", dir, "--target", "staging")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, "STAGING_URL, which is not set")

	// Staging configured to the production database: refused.
	r = run(t, map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": prod}, "load", dir, "--target", "staging")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, "is the production database")
	require.Zero(t, count(t, prod, "ingests"))
}

// TestTargetsWriteTheirOwnDatabases: production (DATABASE_URL) and staging
// (DATABASE_WRITE_URL_STAGING, or the targets file) are two databases; each
// ingest lands in its target's database only, and its report, its ledger
// row and `status` name that target. Staged runs accumulate, and staging a
// run again updates what it staged.
func TestTargetsWriteTheirOwnDatabases(t *testing.T) {
	t.Parallel()
	prod, staging := pgtest.New(t), pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo}
	one, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400002811})
	two, _ := genTree(t, generate.Options{Points: 2, Seed: 2, RunID: 28400002812})

	r := run(t, vars, "load", one, "--target", "staging", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	sum := parseSummary(t, r.stdout)
	require.Equal(t, "staging", sum.Target)
	require.NotNil(t, sum.Publication)
	require.Equal(t, "staged", sum.Publication.Kind)
	require.Equal(t, []string{"staging"}, ledgerTargets(t, staging))
	require.Zero(t, count(t, prod, "ingests"), "a staged ingest wrote to production")
	require.Zero(t, count(t, prod, "benchmark_results"))
	staged := count(t, staging, "benchmark_results")
	require.Positive(t, staged)

	text := run(t, vars, "report", "--run-id", "28400002811", "--target", "staging", "--format", "text")
	requireCode(t, cli.ExitOK, text)
	require.Contains(t, text.stdout, "Results ingested into the staging database.")
	require.Contains(t, text.stdout, "staged ingest into the staging database, not production")

	// A second run accumulates beside the first.
	requireCode(t, cli.ExitOK, run(t, vars, "load", two, "--target", "staging"))
	require.Greater(t, count(t, staging, "benchmark_results"), staged)
	require.Equal(t, []int64{28400002811, 28400002812}, queryInt64s(t, staging, "SELECT DISTINCT github_run_id FROM workflow_runs ORDER BY 1"))

	// Staging the first run again with one value changed updates it in place.
	changeOneMetric(t, one)
	again := run(t, vars, "load", one, "--target", "staging", "--format", "json")
	requireCode(t, cli.ExitOK, again)
	as := parseSummary(t, again.stdout)
	require.Zero(t, as.Rows.Benchmark.New)
	require.Equal(t, int64(1), as.Details.BenchmarkRowsUpdated, "the changed row is updated")
	require.Equal(t, []int64{1}, queryInt64s(t, staging,
		"SELECT count(*) FROM benchmark_results WHERE (metrics->>'tput_per_gpu')::float8 = 4242.5"))

	// status names the target and its database; production's is empty.
	st := run(t, vars, "status", "--target", "staging")
	requireCode(t, cli.ExitOK, st)
	require.Contains(t, st.stdout, "Target staging\n")
	require.Contains(t, st.stdout, "28400002811")
	ps := run(t, vars, "status")
	requireCode(t, cli.ExitOK, ps)
	require.Contains(t, ps.stdout, "Target production\n")
	require.NotContains(t, ps.stdout, "28400002811")
	require.Zero(t, count(t, prod, "ingests"))

	// Production, configured by a targets file this time, gets its own ingest.
	file := filepath.Join(t.TempDir(), "targets.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"production": {"urlEnv": "PROD_URL"}, "staging": {"url": "`+staging+`"}}`), 0o644))
	fvars := map[string]string{"PROD_URL": prod, "INGEST_TARGETS_FILE": file, "INGEST_REPO": runTestRepo}
	p := run(t, fvars, "load", two, "--format", "json")
	requireCode(t, cli.ExitOK, p)
	require.Equal(t, "production", parseSummary(t, p.stdout).Target)
	require.Equal(t, []string{"production"}, ledgerTargets(t, prod))
	require.Equal(t, []string{"staging", "staging", "staging"}, ledgerTargets(t, staging))
}

// changeOneMetric sets tput_per_gpu of the first per-job benchmark file of
// the tree at dir to 4242.5 (its listing does not digest folders).
func changeOneMetric(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "bmk_*", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out := tputPattern.ReplaceAll(b, []byte(`"tput_per_gpu": 4242.5`))
		if string(out) != string(b) {
			require.NoError(t, os.WriteFile(f, out, 0o644))
			return
		}
	}
	t.Fatalf("no tput_per_gpu under %s", dir)
}

// TestBackfillIntoStagingStages: a backfill with --target staging writes
// to the staging database only, and each run's report says it was staged
// (with its tree digest, for a later promotion to compare with).
func TestBackfillIntoStagingStages(t *testing.T) {
	t.Parallel()
	prod, staging := pgtest.New(t), pgtest.New(t)
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 2, Seed: 1, RunID: 28400002851})
	require.NoError(t, err)
	vars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo}
	requireCode(t, cli.ExitOK, run(t, vars, "backfill", "--from-dir", trees, "--target", "staging"))
	require.Zero(t, count(t, prod, "ingests"))
	require.Equal(t, []string{"staged"}, queryStrings(t, staging, "SELECT summary->'publication'->>'kind' FROM ingests"))
	require.Equal(t, []string{"staging"}, ledgerTargets(t, staging))
	require.Len(t, queryStrings(t, staging, "SELECT summary->'publication'->>'treeDigest' FROM ingests WHERE summary->'publication'->>'treeDigest' LIKE 'sha256:%'"), 1)
}

// TestTargetsFileParsedStrictly: a targets file that a lenient reader
// would take in part (the last of two entries for one target, the last of
// two spellings of a key, the first of two objects) is a usage error
// naming the file and where, before any database is touched.
func TestTargetsFileParsedStrictly(t *testing.T) {
	t.Parallel()
	prod := pgtest.New(t)
	for _, tt := range []struct {
		name, body, want string
	}{
		{"target named twice", `{"staging": {"urlEnv": "STAGING_URL"}, "staging": {"url": "postgres://elsewhere/db"}}`,
			`line 1, column 40: duplicate key "staging"`},
		{"key given twice", `{"staging": {"urlEnv": "STAGING_URL", "urlEnv": "OTHER_URL"}}`, `line 1, column 39: duplicate key "staging.urlEnv"`},
		{"two objects", "{\"staging\": {\"urlEnv\": \"STAGING_URL\"}}\n{\"staging\": {\"url\": \"postgres://elsewhere/db\"}}",
			"line 2, column 1: data after the JSON value"},
		{"unknown field", `{"staging": {"urlVar": "STAGING_URL"}}`, `unknown field "urlVar"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "targets.json")
			require.NoError(t, os.WriteFile(file, []byte(tt.body), 0o644))
			r := run(t, map[string]string{"DATABASE_URL": prod, "STAGING_URL": prod, "INGEST_TARGETS_FILE": file},
				"status", "--target", "staging")
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, file+": "+tt.want)
		})
	}
	require.Zero(t, count(t, prod, "ingests"))
}
