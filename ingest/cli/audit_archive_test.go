package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestAuditArchive: without a token, `ingest audit --archive` lists the
// archive's runs never ingested with the command that recovers each (and
// that command works), a purged run without one, and an ingested run the
// archive lacks.
func TestAuditArchive(t *testing.T) {
	t.Parallel()
	const repo = "SemiAnalysisAI/InferenceX"
	mirror := writeArchive(t, []archivedRun{
		{id: 28700000001, date: "2026-01-10", metadata: true},
		{id: 28700000002, date: "2026-01-20"},
		{id: 28700000003, date: "2026-02-03"},
	})
	ov := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ov, []byte(`{"purgedRuns":[{"runId":28700000003,"reason":"bad firmware"}]}`), 0o644))
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_CACHE_DIR": t.TempDir(), "INGEST_TARGET": "production", "INGEST_REPO": repo}
	requireCode(t, cli.ExitOK, run(t, vars, "run", "--run-id", "28700000001", "--source", "archive", "--archive", mirror))
	tree, _ := genTree(t, generate.Options{Points: 3, Seed: 9, RunID: 28700000009})
	requireCode(t, cli.ExitOK, run(t, vars, "load", tree, "--repo", repo))

	audit := func() result {
		return run(t, vars, "audit", "--since", "2026-01-01", "--archive", mirror, "--overrides", ov)
	}
	r := audit()
	requireCode(t, cli.ExitCompletedWithFailures, r)
	recover := fmt.Sprintf("ingest run --repo %s --run-id 28700000002 --source archive --archive %s", repo, mirror)
	require.Contains(t, r.stdout, "Archive "+mirror+" against the production ledger: 3 runs in the window, 1 ingested, 1 never ingested; 1 ingested runs missing from the archive")
	require.Contains(t, r.stdout, "run 28700000002 (2026-01-20): in the archive, never ingested\n  recover: "+recover+"\n")
	require.Contains(t, r.stdout, "run 28700000003 (2026-02-03): in the archive, purged on purpose — bad firmware\n\n")
	require.Contains(t, r.stdout, "run 28700000009 (2026-11-20): ingested, missing from the archive")

	requireCode(t, cli.ExitOK, run(t, vars, strings.Fields(recover)[1:]...))
	again := audit()
	require.Contains(t, again.stdout, "3 runs in the window, 2 ingested, 0 never ingested")
}
