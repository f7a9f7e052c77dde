package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// truncateListing cuts a tree's artifacts.json to `{"artifacts": [`.
func truncateListing(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "artifacts.json")
	_, err := os.Stat(path)
	require.NoError(t, err, "the tree has a listing to break")
	require.NoError(t, os.WriteFile(path, []byte(`{"artifacts": [`), 0o644))
}

const truncatedListing = "artifacts.json: invalid JSON: unexpected EOF"

// TestLoadRefusesMalformedListing: `ingest load` of a tree whose
// artifacts.json does not parse exits 1 naming the file and the reason —
// not "no run id" when the run is unknown — writes nothing, and records
// the aborted attempt when the run id is given. A dry run says the same.
func TestLoadRefusesMalformedListing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantLedger []int64 // github_run_id of aborted ledger rows
	}{
		{name: "run unknown", args: nil, wantLedger: []int64{}},
		{name: "run given", args: []string{"--run-id", "28400000091"}, wantLedger: []int64{28400000091}},
		{name: "dry run", args: []string{"--run-id", "28400000091", "--dry-run"}, wantLedger: []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := genTree(t, generate.Options{Points: 2, Seed: 5, RunID: 28400000091})
			truncateListing(t, dir)
			db := pgtest.New(t)
			requireCode(t, cli.ExitOK, run(t, nil, "migrate", "up", "--database-url", db))

			r := run(t, nil, append([]string{"load", dir, "--database-url", db}, tt.args...)...)
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stderr, "ingest: aborted: "+truncatedListing+"\n")
			require.NotContains(t, r.stderr, "no run id")
			if len(tt.args) > 2 { // the dry run
				require.Contains(t, r.stdout, "Ingest report — 🔎 Dry run failed: "+truncatedListing+". Nothing was written.")
			} else {
				require.Contains(t, r.stdout, "Ingest report — ❌ Ingest failed: "+truncatedListing+". Nothing was written.")
			}
			for _, table := range []string{"workflow_runs", "configs", "benchmark_results", "run_stats", "eval_results", "changelog_entries"} {
				require.Zero(t, count(t, db, table), "rows in %s", table)
			}
			require.Equal(t, tt.wantLedger, queryInt64s(t, db, `SELECT github_run_id FROM ingests WHERE status = 'aborted' AND error = $1`, truncatedListing))
			require.Equal(t, int64(len(tt.wantLedger)), count(t, db, "ingests"))
		})
	}
}

// TestBackfillFromDirMalformedListing: a --from-dir tree named by its run
// id whose artifacts.json is broken is queued, and its ingest fails naming
// the listing (recorded in the ledger, exit 3) while the other trees land;
// a broken tree whose name is no run id cannot be queued, so the backfill
// stops before writing anything, naming the listing.
func TestBackfillFromDirMalformedListing(t *testing.T) {
	t.Parallel()
	const good, broken int64 = 28400000101, 28400000102
	vars := func(db string) map[string]string {
		return map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	}
	t.Run("named by its run id", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		trees := t.TempDir()
		for _, id := range []int64{good, broken} {
			_, err := generate.Write(filepath.Join(trees, strconv.FormatInt(id, 10)), generate.Options{Points: 3, Seed: 1, RunID: id})
			require.NoError(t, err)
		}
		truncateListing(t, filepath.Join(trees, strconv.FormatInt(broken, 10)))
		r := run(t, vars(db), "backfill", "--from-dir", trees)
		requireCode(t, cli.ExitCompletedWithFailures, r)
		require.Contains(t, r.stdout, truncatedListing, "%s", r)
		require.Equal(t, []int64{good}, queryInt64s(t, db, `SELECT github_run_id FROM workflow_runs`))
		require.Equal(t, []int64{good}, queryInt64s(t, db, `SELECT github_run_id FROM ingests WHERE status = 'succeeded'`))
		require.Equal(t, []int64{broken}, queryInt64s(t, db, `SELECT github_run_id FROM ingests WHERE status = 'aborted' AND error = $1`, truncatedListing))
	})
	t.Run("named otherwise", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		trees := t.TempDir()
		_, err := generate.Write(filepath.Join(trees, "good"), generate.Options{Points: 3, Seed: 1, RunID: good})
		require.NoError(t, err)
		_, err = generate.Write(filepath.Join(trees, "broken"), generate.Options{Points: 3, Seed: 1, RunID: broken})
		require.NoError(t, err)
		truncateListing(t, filepath.Join(trees, "broken"))
		r := run(t, vars(db), "backfill", "--from-dir", trees)
		requireCode(t, cli.ExitAborted, r)
		require.Contains(t, r.stderr, filepath.Join(trees, "broken")+": "+truncatedListing+" (and the directory's name is not a run id)", "%s", r)
		require.Zero(t, count(t, db, "ingests"))
		require.Zero(t, count(t, db, "workflow_runs"))
	})
}
