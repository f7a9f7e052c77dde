package cli_test

// Review findings on `ingest backfill` and `ingest status`: each test
// states what the README promises and fails while the code breaks it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// migratedBefore5 is a fresh database at migration 4: a production
// database whose operator has not yet run the release that adds backfills.
func migratedBefore5(t *testing.T) string {
	t.Helper()
	db := pgtest.New(t)
	requireCode(t, cli.ExitOK, run(t, map[string]string{"DATABASE_URL": db}, "migrate", "down", "1"))
	require.False(t, tableExists(t, db, "backfill_runs"), "the test starts before migration 5")
	require.True(t, tableExists(t, db, "ingests"))
	return db
}

// TestReviewStatusBeforeBackfillMigration: `ingest status` never migrates
// (it is read-only), so it must read a ledger whose schema predates
// migration 000005_backfill. It queries backfill_runs unconditionally and
// fails with "relation backfill_runs does not exist".
func TestReviewStatusBeforeBackfillMigration(t *testing.T) {
	db := migratedBefore5(t)
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000011})
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production", "INGEST_NO_MIGRATE": "1"}
	r := run(t, vars, "load", "--no-migrate", dir)
	requireCode(t, cli.ExitOK, r)
	require.False(t, tableExists(t, db, "backfill_runs"))

	for _, args := range [][]string{{"status"}, {"status", "--run-id", "28400000011"}, {"status", "--format", "json"}} {
		r := run(t, map[string]string{"DATABASE_URL": db}, args...)
		requireCode(t, cli.ExitOK, r)
		require.Contains(t, r.stdout, "28400000011", "%v lists the ingest", args)
	}
}

// TestReviewBackfillDryRunWritesNothing: "--dry-run … write nothing". The
// dry run opens the store with openStore, which applies pending
// migrations: on a database at migration 4 it creates the backfill tables.
func TestReviewBackfillDryRunWritesNothing(t *testing.T) {
	db := migratedBefore5(t)
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 3, Seed: 1, RunID: 28400000021})
	require.NoError(t, err)
	r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}, "backfill", "--from-dir", trees, "--dry-run")
	require.Contains(t, r.stdout, "nothing was written", "%s", r)
	require.False(t, tableExists(t, db, "backfill_runs"), "a dry run applied migration 5: it wrote to the database")
	require.False(t, tableExists(t, db, "backfills"), "a dry run applied migration 5: it wrote to the database")
}

// TestReviewBackfillExitCodeWhenALookupFails: "Exit code: 0, or 3 when a
// run failed". A run of --runs that GitHub does not know (404) is queued
// as failed at listing time and listed among the failures, but the exit
// code only looks at the runs this worker claimed: it is 0.
func TestReviewBackfillExitCodeWhenALookupFails(t *testing.T) {
	fake, ids := backfillFake(t)
	db := pgtest.New(t)
	runs := filepath.Join(t.TempDir(), "runs.txt")
	const unknown int64 = 31999999999
	require.NoError(t, os.WriteFile(runs, []byte(fmt.Sprintf("%d\n%d\n", ids[0], unknown)), 0o644))
	vars := runVars(fake, db, t.TempDir())
	r := run(t, vars, "backfill", "--runs", runs)
	require.Contains(t, r.stdout, fmt.Sprintf("run %d attempt 0: look up the run:", unknown), "%s", r)
	require.Contains(t, r.stdout, "1 ingested, 0 skipped, 1 failed", "%s", r)
	requireCode(t, cli.ExitCompletedWithFailures, r)
}

// TestReviewBackfillFromDirTreeWithoutListing: "A run is skipped when the
// ledger holds an ingest of its latest attempt", and "a run is never
// ingested twice by one pass: the claim re-checks the ledger". A
// --from-dir tree named by its run id without artifacts.json is queued
// with attempt 0; the ledger check is skipped for attempt 0 (ingested()
// returns nil), so every later pass ingests it again, and a worker killed
// between the ingest's commit and the claim's commit would re-ingest it in
// the same pass.
func TestReviewBackfillFromDirTreeWithoutListing(t *testing.T) {
	db := pgtest.New(t)
	trees := t.TempDir()
	const id int64 = 28400000031
	_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(id, 10)), generate.Options{Points: 3, Seed: 1, RunID: id, NoListing: true})
	require.NoError(t, err)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}

	r := run(t, vars, "backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{id}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`))

	// The same command again: a new pass, and the ledger holds the run.
	r = run(t, vars, "backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{id}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`),
		"the run was ingested a second time although the ledger holds it\n%s", r)
}

// TestReviewBackfillFromDirEmptyNumericDirectory: --from-dir takes "each
// subdirectory a tree as `ingest load` reads it"; a directory that is not
// a run tree should be left out. An empty directory whose name happens to
// be a number (a year, a PR number, a stray mkdir) is queued as that run
// and ingested: the ledger and workflow_runs gain a run GitHub never had.
func TestReviewBackfillFromDirEmptyNumericDirectory(t *testing.T) {
	db := pgtest.New(t)
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 3, Seed: 1, RunID: 28400000051})
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(trees, "2026"), 0o755))
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	r := run(t, vars, "backfill", "--from-dir", trees)
	ledger := queryInt64s(t, db, `SELECT github_run_id FROM ingests ORDER BY id`)
	runs := queryInt64s(t, db, `SELECT github_run_id FROM workflow_runs ORDER BY 1`)
	require.Equal(t, []int64{28400000051}, runs, "workflow_runs (ledger %v)\n%s", ledger, r)
	require.Equal(t, []int64{28400000051}, ledger, "%s", r)
}

// TestReviewBackfillDryRunMatchesTheOpenPass: --dry-run should "print each
// run with what would be done". Plan ignores the open pass: a run that
// failed in it is shown as "ingest", but the command joins the open pass,
// where "a run settled in it is never worked on again", and leaves it
// alone.
func TestReviewBackfillDryRunMatchesTheOpenPass(t *testing.T) {
	db := pgtest.New(t)
	trees := t.TempDir()
	ids := []int64{28400000061, 28400000062, 28400000063}
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
	require.Contains(t, r.stdout, "1 ingested, 0 skipped, 1 failed, 0 pending: finished.", "%s", r)

	// A third run arrives, and a worker of a second pass dies holding it:
	// the pass stays open with the third run pending.
	_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(ids[2], 10)), generate.Options{Points: 3, Seed: 3, RunID: ids[2]})
	require.NoError(t, err)
	require.NoError(t, queryRow(t, db, `UPDATE backfills SET finished_at = NULL RETURNING true`, new(bool)))
	require.NoError(t, queryRow(t, db, fmt.Sprintf(`INSERT INTO backfill_runs (backfill_id, github_run_id, run_attempt, tree)
		VALUES (1, %d, 1, '%s') RETURNING true`, ids[2], filepath.Join(trees, strconv.FormatInt(ids[2], 10))), new(bool)))

	dry := run(t, vars, "backfill", "--from-dir", trees, "--dry-run")
	requireCode(t, cli.ExitOK, dry)
	real := run(t, vars, "backfill", "--from-dir", trees)
	require.Contains(t, real.stdout, "Backfill pass #1 ", "the command joined the open pass\n%s", real)
	require.Contains(t, real.stdout, "It worked on 1 runs", "%s", real)
	require.Contains(t, dry.stdout, "dry run: 1 of 3 runs would be ingested", "the dry run promised more than the command did\n%s", dry)
}

// TestReviewBackfillFromDirMergeRunTree: a tree downloaded by hand from a
// merge run that reused a sweep carries the merge run's artifacts.json and
// reuse metadata naming the source run. The queue keys it by the merge run
// (artifacts.json), the ingest records the source run (the reuse
// metadata), so the ledger check of the next pass — by the merge run's id —
// never finds it, and every later backfill of the directory ingests it
// again.
func TestReviewBackfillFromDirMergeRunTree(t *testing.T) {
	db := pgtest.New(t)
	trees := t.TempDir()
	const source, merge int64 = 28400000071, 28400000072
	tree := filepath.Join(trees, "merge-run")
	_, err := generate.Write(tree, generate.Options{Points: 3, Seed: 1, RunID: merge})
	require.NoError(t, err)
	reuse := filepath.Join(tree, "reused-ingest-metadata")
	require.NoError(t, os.MkdirAll(reuse, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(reuse, "reuse_source_run.json"), []byte(fmt.Sprintf(
		`{"source_run_id": %d, "source_run_attempt": 1, "ingest_run_id": %d, "ingest_run_attempt": 1}`, source, merge)), 0o644))
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}

	r := run(t, vars, "backfill", "--from-dir", trees)
	require.Equal(t, []int64{source}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`), "%s", r)
	r = run(t, vars, "backfill", "--from-dir", trees)
	require.Equal(t, []int64{source}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`),
		"the next backfill ingested the reused run again\n%s", r)
}

// TestReviewBackfillSmallPool: the claiming transaction holds one pooled
// connection for the whole ingest. With a pool of one (pool_max_conns=1 in
// DATABASE_URL), with which `ingest load` works, the ingest waits for a
// connection the claim never gives back: the backfill hangs.
func TestReviewBackfillSmallPool(t *testing.T) {
	db := pgtest.New(t)
	small := db + "?pool_max_conns=1"
	if strings.Contains(db, "?") {
		small = db + "&pool_max_conns=1"
	}
	vars := map[string]string{"DATABASE_URL": small, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	one, _ := genTree(t, generate.Options{Points: 3, Seed: 2, RunID: 28400000082})
	requireCode(t, cli.ExitOK, run(t, vars, "load", one))

	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 3, Seed: 1, RunID: 28400000081})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r := runCtx(ctx, vars, "backfill", "--from-dir", trees)
	require.NoError(t, ctx.Err(), "the backfill hung with a pool of one connection\n%s", r)
	requireCode(t, cli.ExitOK, r)
}

// TestReviewBackfillFromDirSymlinkedTree: a directory of run trees put
// together with symbolic links (ln -s ~/.cache/ingest/…/runs/N) is a
// natural way to choose runs for --from-dir. DirSource.List keeps only
// entries whose DirEntry is a directory, which a symbolic link is not: the
// trees are skipped without a word and the backfill "finishes" with 0 runs.
func TestReviewBackfillFromDirSymlinkedTree(t *testing.T) {
	db := pgtest.New(t)
	tree, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000091})
	trees := t.TempDir()
	require.NoError(t, os.Symlink(tree, filepath.Join(trees, "28400000091")))
	r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"},
		"backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{28400000091}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`), "%s", r)
}
