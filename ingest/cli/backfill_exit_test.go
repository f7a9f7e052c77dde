package cli_test

// Exit codes and settled states of `ingest backfill` that an operator
// (or a CI job) acts on.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestBackfillExitCodeResumedPassWithFailures: a worker that resumes a pass in which an earlier
// (interrupted or killed) worker settled a run failed exits 3, whichever worker settled the
// failure: an operator or a CI job that reruns the command until it exits 0 is not told the
// backfill succeeded.
func TestBackfillExitCodeResumedPassWithFailures(t *testing.T) {
	db := pgtest.New(t)
	ids := []int64{28400000161, 28400000162, 28400000163}
	trees := treesWithABrokenRun(t, ids[0], ids[1])
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	r := run(t, vars, "backfill", "--from-dir", trees)
	requireCode(t, cli.ExitCompletedWithFailures, r)

	// As if that worker had been killed with a third run pending: the pass
	// is open, its failed run settled.
	_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(ids[2], 10)), generate.Options{Points: 3, Seed: 3, RunID: ids[2]})
	require.NoError(t, err)
	require.NoError(t, queryRow(t, db, `UPDATE backfills SET finished_at = NULL RETURNING true`, new(bool)))
	require.NoError(t, queryRow(t, db, fmt.Sprintf(`INSERT INTO backfill_runs (backfill_id, github_run_id, run_attempt, tree)
		VALUES (1, %d, 1, '%s') RETURNING true`, ids[2], filepath.Join(trees, strconv.FormatInt(ids[2], 10))), new(bool)))

	again := run(t, vars, "backfill", "--from-dir", trees)
	require.Contains(t, again.stdout, "Backfill pass #1 ", "the command resumed the open pass\n%s", again)
	require.Contains(t, again.stdout, "1 failed", "the result lists the pass's failed run\n%s", again)
	requireCode(t, cli.ExitCompletedWithFailures, again)
}

// TestBackfillExpiredArtifactsAreSkipped: GitHub keeps artifacts 90 days by default: a run whose
// artifacts have all expired can never be ingested, so it is settled skipped with its reason
// (listed at the end), not failed; the command exits 0 and later passes do not retry it.
func TestBackfillExpiredArtifactsAreSkipped(t *testing.T) {
	fake, ids := backfillFake(t)
	db := pgtest.New(t)
	expired := ids[0]
	fake.SetExpired(expired, "", true)
	runs := filepath.Join(t.TempDir(), "runs.txt")
	require.NoError(t, os.WriteFile(runs, []byte(fmt.Sprintf("%d\n%d\n", ids[0], ids[1])), 0o644))
	vars := runVars(fake, db, t.TempDir())

	r := run(t, vars, "backfill", "--runs", runs)
	require.Contains(t, r.stdout, "1 ingested", "%s", r)
	require.Contains(t, r.stdout, "no unexpired artifacts", "the expired run is reported with its reason\n%s", r)
	var state string
	require.NoError(t, queryRow(t, db, fmt.Sprintf(`SELECT state FROM backfill_runs WHERE github_run_id = %d`, expired), &state))
	require.Equal(t, "skipped", state, "a run whose artifacts expired is not a retryable failure\n%s", r)
	requireCode(t, cli.ExitOK, r)
}
