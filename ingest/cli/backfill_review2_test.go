package cli_test

// Second review of the backfill fixes: each test states what the README
// promises and fails while the code breaks it.

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

// TestReview2BackfillExitCodeResumedPassWithFailures: "Rerun the same
// command" resumes a pass; "Exit code: 0, or 3 when a run failed". A
// worker that resumes a pass in which an earlier (interrupted or killed)
// worker settled a run failed prints that failure in "where the pass
// stands", closes the pass, and exits 0: the exit code only counts the
// runs this worker settled or queued. An operator (or a CI job) that
// reruns the command until it exits 0 is told the backfill succeeded, and
// the failed run is retried only if someone runs it once more.
func TestReview2BackfillExitCodeResumedPassWithFailures(t *testing.T) {
	db := pgtest.New(t)
	trees := t.TempDir()
	ids := []int64{28400000161, 28400000162, 28400000163}
	for i, id := range ids[:2] {
		_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(id, 10)), generate.Options{Points: 3, Seed: int64(i + 1), RunID: id})
		require.NoError(t, err)
	}
	// The second run's reuse metadata is unreadable: its ingest aborts.
	bad := filepath.Join(trees, strconv.FormatInt(ids[1], 10), "reused-ingest-metadata")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "reuse_source_run.json"), []byte("{"), 0o644))
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

// TestReview2BackfillExpiredArtifactsFailForever: the README's own use
// case is "to load a year of sweeps", but GitHub keeps artifacts 90 days
// by default. A completed run whose artifacts have all expired (or a run
// cancelled before it uploaded any) can never be ingested, yet it is
// settled `failed` ("no unexpired artifacts found"), the command exits 3,
// and every later pass — "failed runs are tried again" — looks it up,
// lists its artifacts and fails it again: a backfill over any window
// older than the retention never exits 0, and its real failures drown in
// permanent ones. Such a run should be settled as skipped (not
// retryable) with its reason.
func TestReview2BackfillExpiredArtifactsFailForever(t *testing.T) {
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
