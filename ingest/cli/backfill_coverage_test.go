package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestBackfillCoverageGuard: the coverage guard applies to backfill as to
// load. A backfilled run that would shrink a published curve is rolled
// back under INGEST_COVERAGE_GUARD=refuse and under --coverage-guard
// refuse: exit 4, nothing of it written, the run settled failed with the
// guard's reason. Under warn (the default) the same backfill writes it.
func TestBackfillCoverageGuard(t *testing.T) {
	t.Parallel()
	wide, _ := genTree(t, generate.Options{Points: 24, Seed: 7, RunID: 920001})
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "narrow"), generate.Options{Points: 6, Seed: 7, RunID: 920002})
	require.NoError(t, err)
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	// The narrow tree's listing dates it 2026-11-20: it supersedes the wide run.
	requireCode(t, cli.ExitOK, run(t, vars, "load", wide, "--run-date", "2026-11-01"))
	rows := count(t, db, "benchmark_results")

	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"environment", map[string]string{"INGEST_COVERAGE_GUARD": "refuse"}, nil},
		{"flag", nil, []string{"--coverage-guard", "refuse"}},
	} {
		env := map[string]string{}
		for k, v := range vars {
			env[k] = v
		}
		for k, v := range c.env {
			env[k] = v
		}
		r := run(t, env, append([]string{"backfill", "--from-dir", trees}, c.args...)...)
		requireCode(t, cli.ExitCoverageRefused, r)
		require.Equal(t, rows, count(t, db, "benchmark_results"), "%s: a refused run writes nothing", c.name)
		require.Equal(t, []string{"failed"}, queryStrings(t, db,
			`SELECT state FROM backfill_runs WHERE github_run_id = 920002 ORDER BY backfill_id DESC LIMIT 1`), c.name)
		require.Contains(t, queryStrings(t, db,
			`SELECT detail FROM backfill_runs WHERE github_run_id = 920002 ORDER BY backfill_id DESC LIMIT 1`)[0],
			"coverage guard refused the run", c.name)
	}

	r := run(t, vars, "backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{920002}, queryInt64s(t, db,
		`SELECT DISTINCT w.github_run_id FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id WHERE w.github_run_id = 920002`),
		"under warn the run is written")
}

// TestBackfillCoverageGuardUsage: an unknown guard mode is a usage error
// of backfill too, found before anything connects.
func TestBackfillCoverageGuardUsage(t *testing.T) {
	t.Parallel()
	r := run(t, map[string]string{"INGEST_REPO": runTestRepo, "DATABASE_URL": "postgres://127.0.0.1:1/none"},
		"backfill", "--from-dir", t.TempDir(), "--coverage-guard", "block")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `invalid value "block" for --coverage-guard: want warn|refuse`)
}
