package cli_test

// Edge cases of `ingest backfill` and `ingest status`, each stated as
// what the README promises.

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
	migrateBefore5(t, db)
	return db
}

// migrateBefore5 takes the database at db down to migration 4.
func migrateBefore5(t *testing.T, db string) {
	t.Helper()
	// Down past every migration from 5 on (later ones are numbered higher).
	steps := 0
	for _, v := range migrationVersions(t) {
		if v >= 5 {
			steps++
		}
	}
	requireCode(t, cli.ExitOK, run(t, map[string]string{"DATABASE_URL": db}, "migrate", "down", fmt.Sprint(steps), "--yes"))
	require.False(t, tableExists(t, db, "backfill_runs"), "the test starts before migration 5")
	require.True(t, tableExists(t, db, "ingests"))
}

// TestStatusBeforeBackfillMigration: `ingest status` never migrates (it is read-only), so it reads
// a ledger whose schema predates migration 000005_backfill: without the backfill tables it lists
// the ingests and no pass. A write with --no-migrate refuses that schema.
func TestStatusBeforeBackfillMigration(t *testing.T) {
	db := pgtest.New(t)
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000011})
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	requireCode(t, cli.ExitOK, run(t, vars, "load", dir))
	migrateBefore5(t, db)
	r := run(t, vars, "load", "--no-migrate", dir)
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `(schema version 4, this binary needs `)
	require.Contains(t, r.stderr, `run "ingest migrate up" first`)
	require.False(t, tableExists(t, db, "backfill_runs"))

	for _, args := range [][]string{{"status"}, {"status", "--run-id", "28400000011"}, {"status", "--format", "json"}} {
		r := run(t, map[string]string{"DATABASE_URL": db}, args...)
		requireCode(t, cli.ExitOK, r)
		require.Contains(t, r.stdout, "28400000011", "%v lists the ingest", args)
	}
}

// TestBackfillDryRunWritesNothing: "--dry-run … write nothing": not even the pending migrations,
// so a database at migration 4 gets no backfill tables.
func TestBackfillDryRunWritesNothing(t *testing.T) {
	db := migratedBefore5(t)
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 3, Seed: 1, RunID: 28400000021})
	require.NoError(t, err)
	r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}, "backfill", "--from-dir", trees, "--dry-run")
	require.Contains(t, r.stdout, "nothing was written", "%s", r)
	require.False(t, tableExists(t, db, "backfill_runs"), "a dry run applied migration 5: it wrote to the database")
	require.False(t, tableExists(t, db, "backfills"), "a dry run applied migration 5: it wrote to the database")
}

// TestBackfillExitCodeWhenALookupFails: "Exit code: 0, or 3 when a run failed": a run of --runs
// that GitHub does not know (404) is queued failed at listing time, listed among the failures, and
// makes the exit code 3.
func TestBackfillExitCodeWhenALookupFails(t *testing.T) {
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

// TestBackfillFromDirTreeWithoutListing: a --from-dir tree named by its run id without
// artifacts.json is queued at attempt 1, the attempt its ingest records, so the ledger check finds
// it: a later pass does not ingest it again.
func TestBackfillFromDirTreeWithoutListing(t *testing.T) {
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

// TestBackfillFromDirEmptyNumericDirectory: a directory that is not a run tree is left out: an
// empty directory whose name happens to be a number (a year, a PR number, a stray mkdir) does not
// become a run GitHub never had.
func TestBackfillFromDirEmptyNumericDirectory(t *testing.T) {
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

// TestBackfillDryRunMatchesTheOpenPass: the dry run shows what resuming the open pass does: a run
// that failed in it is shown settled, not to be ingested, since the command joins that pass and
// leaves its settled runs alone.
func TestBackfillDryRunMatchesTheOpenPass(t *testing.T) {
	db := pgtest.New(t)
	ids := []int64{28400000061, 28400000062, 28400000063}
	trees := treesWithABrokenRun(t, ids[0], ids[1])
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

// TestBackfillFromDirMergeRunTree: a tree downloaded by hand from a merge run that reused a sweep
// carries the merge run's artifacts.json and reuse metadata naming the source run. It is queued
// under the source run, as its ingest records it, so the next backfill of the directory finds it
// in the ledger and does not ingest it again.
func TestBackfillFromDirMergeRunTree(t *testing.T) {
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

// TestBackfillSmallPool: the claiming transaction holds one pooled connection for the whole
// ingest: with pool_max_conns=1 in DATABASE_URL (with which `ingest load` works) the store still
// opens three connections, so the backfill does not hang.
func TestBackfillSmallPool(t *testing.T) {
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

// TestBackfillFromDirSymlinkedTree: a directory of run trees put together with symbolic links (ln
// -s ~/.cache/ingest/…/runs/N) is backfilled like one of trees.
func TestBackfillFromDirSymlinkedTree(t *testing.T) {
	db := pgtest.New(t)
	tree, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000091})
	trees := t.TempDir()
	require.NoError(t, os.Symlink(tree, filepath.Join(trees, "28400000091")))
	r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"},
		"backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{28400000091}, queryInt64s(t, db, `SELECT github_run_id FROM ingests`), "%s", r)
}

// treesWithABrokenRun writes a --from-dir directory with a run tree of
// good and one of broken, whose unreadable reuse metadata makes its ingest
// abort.
func treesWithABrokenRun(t *testing.T, good, broken int64) string {
	t.Helper()
	trees := t.TempDir()
	for i, id := range []int64{good, broken} {
		_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(id, 10)), generate.Options{Points: 3, Seed: int64(i + 1), RunID: id})
		require.NoError(t, err)
	}
	bad := filepath.Join(trees, strconv.FormatInt(broken, 10), "reused-ingest-metadata")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "reuse_source_run.json"), []byte("{"), 0o644))
	return trees
}
