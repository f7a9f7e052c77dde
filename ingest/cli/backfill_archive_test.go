package cli_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// archivedRun is one run of a generated archive.
type archivedRun struct {
	id       int64
	date     string
	metadata bool
	edit     func(t *testing.T, dir string, ids map[string]int64)
}

// writeArchive generates a small sweep per run and lays it out as the
// copier names it under a mirror directory.
func writeArchive(t *testing.T, runs []archivedRun) string {
	t.Helper()
	root := t.TempDir()
	for i, r := range runs {
		tree, _ := genTree(t, generate.Options{Points: 3, Seed: int64(i + 1), RunID: r.id, Zip: true})
		day, err := time.Parse(time.DateOnly, r.date)
		require.NoError(t, err)
		ar := generate.ArchiveRun{Date: day, Workflow: "Full_Sweep", RunID: r.id, IDBase: 6_000_000_000 + int64(i)*1000,
			Metadata: r.metadata, HeadSHA: fmt.Sprintf("%040d", r.id), HeadBranch: "main"}
		ids, err := generate.WriteArchiveRun(root, tree, ar)
		require.NoError(t, err)
		if r.edit != nil {
			r.edit(t, ar.Dir(root), ids)
		}
	}
	return root
}

// notASweep is a run of another workflow: one artifact the ingest does not
// read.
func notASweep(t *testing.T, dir string, _ map[string]int64) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("digest.txt")
	require.NoError(t, err)
	_, err = w.Write([]byte("sha256:00"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docker-image-digest_6900000001.zip"), buf.Bytes(), 0o644))
}

// truncateBmk cuts one per-job zip in half: a corrupt artifact.
func truncateBmk(t *testing.T, dir string, _ map[string]int64) {
	zips, err := filepath.Glob(filepath.Join(dir, "bmk_*.zip"))
	require.NoError(t, err)
	require.NotEmpty(t, zips)
	data, err := os.ReadFile(zips[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(zips[0], data[:len(data)/2], 0o644))
}

// reupload copies one per-job zip under a larger artifact id, as a re-run's
// upload of the same name.
func reupload(t *testing.T, dir string, ids map[string]int64) {
	zips, err := filepath.Glob(filepath.Join(dir, "bmk_*.zip"))
	require.NoError(t, err)
	data, err := os.ReadFile(zips[0])
	require.NoError(t, err)
	base := filepath.Base(zips[0])
	name := base[:strings.LastIndexByte(base, '_')]
	require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s_%d.zip", name, ids[name]+500)), data, 0o644))
}

// TestBackfillArchive: a backfill of the archive's runs, from a mirror
// without a token, ingests runs with and without artifacts_metadata.json
// and a re-uploaded artifact, skips a purged run and a run of another
// workflow, takes a truncated zip as that artifact's failure, and says per
// month what it did; stopped half way, the same command resumes the pass
// and no run is ingested twice; a second pass finds them all present.
func TestBackfillArchive(t *testing.T) {
	t.Parallel()
	mirror := writeArchive(t, []archivedRun{
		{id: 28600000001, date: "2026-01-10", metadata: true, edit: reupload},
		{id: 28600000002, date: "2026-01-20"},
		{id: 28600000003, date: "2026-02-03", metadata: true},
		{id: 28600000004, date: "2026-02-10", edit: truncateBmk},
		{id: 28600000005, date: "2026-02-15", edit: notASweep},
	})
	ov := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ov, []byte(`{"purgedRuns":[{"runId":28600000003,"reason":"bad firmware"}]}`), 0o644))
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_CACHE_DIR": t.TempDir(), "INGEST_TARGET": "production"}
	args := []string{"backfill", "--repo", "SemiAnalysisAI/InferenceX", "--source", "archive", "--archive", mirror, "--overrides", ov}

	// Stopped once the first run is settled (what a kill does to a worker:
	// its run in progress rolls back and stays pending).
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if n := queryInt64s(t, db, `SELECT count(*) FROM backfill_runs WHERE state <> 'pending'`); len(n) == 1 && n[0] >= 1 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	first := runCtx(ctx, vars, args...)
	cancel()
	if first.code == cli.ExitAborted {
		require.Contains(t, first.stderr, "Rerun the same command to resume")
	}

	r := run(t, vars, args...)
	requireCode(t, cli.ExitCompletedWithFailures, r) // the truncated zip
	require.Contains(t, r.stdout, "The archive "+mirror+", by month of the runs:")
	require.Contains(t, r.stdout, "| 2026-01 | 2 | 2 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |")
	require.Contains(t, r.stdout, "| 2026-02 | 3 | 1 | 0 | 1 | 1 | 0 | 0 | 0 | 0 |")
	require.Equal(t, []int64{1, 1, 1}, queryInt64s(t, db,
		`SELECT count(*) FROM ingests WHERE github_run_id IN (28600000001, 28600000002, 28600000004) AND status IN ('succeeded', 'completed_with_failures')
		 GROUP BY github_run_id ORDER BY github_run_id`),
		"each run ingested once across the interruption")
	require.Equal(t, []int64{1}, queryInt64s(t, db, `SELECT count(*) FROM ingests WHERE github_run_id = 28600000004 AND status = 'completed_with_failures'`))
	require.Zero(t, queryInt64s(t, db, `SELECT count(*) FROM ingests WHERE github_run_id = 28600000005`)[0])
	require.Positive(t, count(t, db, "benchmark_results"))

	again := run(t, vars, append(args, "--since", "2026-01-01")...)
	require.Contains(t, again.stdout, "| 2026-01 | 2 | 0 | 2 | 0 | 0 | 0 | 0 | 0 | 0 |", again.stdout)
}
