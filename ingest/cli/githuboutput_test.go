package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

var outputBlock = regexp.MustCompile(`(?s)([a-z-]+)<<(ingest_[0-9a-f]{24})\n(.*?)\n(ingest_[0-9a-f]{24})\n`)

// readOutputs parses a GITHUB_OUTPUT file (the last value of a name wins,
// as in Actions).
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	rest := string(b)
	for len(rest) > 0 {
		m := outputBlock.FindStringSubmatchIndex(rest)
		require.NotNil(t, m, "not an output block: %q", rest)
		require.Zero(t, m[0], "stray text before an output block: %q", rest)
		name, open, value, closing := rest[m[2]:m[3]], rest[m[4]:m[5]], rest[m[6]:m[7]], rest[m[8]:m[9]]
		require.Equal(t, open, closing)
		out[name] = value
		rest = rest[m[1]:]
	}
	return out
}

// TestGitHubOutputs: the outputs a workflow's callbacks are built from —
// `status --run-id` before the ingest (target, database, earlier ingests),
// then the ingest's own (target, status, ingest id, headline, publication,
// same inputs) — for a staged ingest and its promotion.
func TestGitHubOutputs(t *testing.T) {
	t.Parallel()
	prod, staging := pgtest.New(t), pgtest.New(t)
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 9, RunID: 28400002841})
	outFile := func() string { return filepath.Join(t.TempDir(), "output") }
	vars := func(path string) map[string]string {
		return map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo, "GITHUB_OUTPUT": path}
	}

	started := outFile()
	requireCode(t, cli.ExitOK, run(t, vars(started), "status", "--target", "staging", "--run-id", "28400002841"))
	require.Equal(t, map[string]string{"target": "staging", "database": dbName(t, staging), "ingests": "0", "last-status": ""},
		readOutputs(t, started))

	staged := outFile()
	requireCode(t, cli.ExitOK, run(t, vars(staged), "load", dir, "--target", "staging"))
	so := readOutputs(t, staged)
	require.Equal(t, "staging", so["target"])
	require.Equal(t, dbName(t, staging), so["database"])
	require.Equal(t, "0", so["exit-code"])
	require.Equal(t, "succeeded", so["status"])
	require.Equal(t, "1", so["ingest-id"])
	require.Equal(t, "28400002841", so["run-id"])
	require.Equal(t, "staged", so["publication"])
	require.Equal(t, "", so["same-inputs"])
	require.Equal(t, "Ingest report — ✅ Results ingested into the staging database.", so["headline"])

	promoted := outFile()
	requireCode(t, cli.ExitOK, run(t, vars(promoted), "load", dir))
	po := readOutputs(t, promoted)
	require.Equal(t, "production", po["target"])
	require.Equal(t, "promotion", po["publication"])
	require.Equal(t, "true", po["same-inputs"])
	require.Equal(t, "1", po["staged-ingest-id"])

	again := outFile()
	requireCode(t, cli.ExitOK, run(t, vars(again), "status", "--target", "staging", "--run-id", "28400002841"))
	require.Equal(t, "1", readOutputs(t, again)["ingests"])
	require.Equal(t, "succeeded", readOutputs(t, again)["last-status"])
}
