package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// noServerURL is a database no server answers, its password visible.
const noServerURL = "postgres://ingest:s3cret@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=5"

// TestJSONStdoutUnderActions: in GitHub Actions a machine format on stdout
// stays parseable: the ::error:: and ::warning:: workflow commands go to
// stderr (the runner reads commands from both streams), for an ingest
// written with failures and for one that aborted.
func TestJSONStdoutUnderActions(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	vars := runVars(fake, pgtest.New(t), t.TempDir())
	vars["GITHUB_ACTIONS"] = "true"
	vars["CI"] = "true"
	r := run(t, vars, "run", "--run-id", "28485856738", "--no-comment", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), "stdout is not one JSON document:\n%s", r.stdout)
	require.NotContains(t, r.stdout, "::error")
	require.NotContains(t, r.stdout, "::warning")
	require.Contains(t, r.stderr, "::error title=Ingest failure (benchmark)::")
	require.Contains(t, r.stderr, "::warning title=Unmapped hardware::")
	require.Contains(t, r.stderr, "--- PR comment (not posted) ---", "--no-comment prints the comment on stderr beside JSON")

	dir := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(dir))
	r = run(t, map[string]string{"GITHUB_ACTIONS": "true", "CI": "true", "DATABASE_WRITE_URL": noServerURL},
		"load", dir, "--format", "json")
	requireCode(t, cli.ExitAborted, r)
	require.NotContains(t, r.stdout, "::error", "a workflow command on stdout")
	require.Contains(t, r.stderr, "::error title=Ingest aborted::")
}

// TestStepOutputsDatabaseUnreachable: load and run whose database cannot
// be reached still write their step outputs, status "not started", as
// docs/operations.md promises.
func TestStepOutputsDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	dir := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(dir))
	for _, tc := range []struct {
		name string
		args []string
		vars map[string]string
	}{
		{"load", []string{"load", dir}, map[string]string{}},
		{"run", []string{"run", "--run-id", "28485856738", "--no-comment"}, runVars(fake, "", t.TempDir())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "github_output")
			tc.vars["DATABASE_URL"] = noServerURL
			tc.vars["GITHUB_OUTPUT"] = out
			r := run(t, tc.vars, tc.args...)
			requireCode(t, cli.ExitAborted, r)
			b, err := os.ReadFile(out)
			require.NoError(t, err, "no step outputs written\n%s", r)
			got := string(b)
			for _, want := range []string{"status<<", "\nnot started\n", "exit-code<<", "\n1\n", "target<<", "\nproduction\n", "database<<", "\nnowhere\n"} {
				require.Contains(t, got, want)
			}
			require.NotContains(t, got, "s3cret")
		})
	}
}

// TestDatabaseURLRequiredInCI: under CI=true or with GITHUB_ACTIONS set,
// no database URL (a missing secret, a fork's pull request) is a usage
// error naming the variable, not the local default; outside CI the
// default stays.
func TestDatabaseURLRequiredInCI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(dir))
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"CI, unset", map[string]string{"CI": "true"}, "DATABASE_WRITE_URL"},
		{"Actions, empty", map[string]string{"GITHUB_ACTIONS": "true", "DATABASE_WRITE_URL": ""}, "DATABASE_WRITE_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "github_output")
			tc.vars["GITHUB_OUTPUT"] = out
			for _, args := range [][]string{{"load", dir, "--dry-run"}, {"status"}} {
				r := run(t, tc.vars, args...)
				requireCode(t, cli.ExitUsage, r)
				require.Contains(t, r.stderr, tc.want, "the error does not name the variable")
				require.Contains(t, r.stderr, "no database URL")
				require.NotContains(t, r.stderr, "127.0.0.1:5432", "the local default was tried")
			}
		})
	}
	// Outside CI the documented local default still applies (no server
	// on the default port is needed to see it: the flag names it).
	r := run(t, map[string]string{"DATABASE_URL": ""}, "load", dir, "--dry-run", "--database-url", noServerURL)
	require.NotEqual(t, cli.ExitUsage, r.code, "%s", r)
	r = run(t, map[string]string{"CI": "true"}, "load", dir, "--dry-run", "--database-url", noServerURL)
	require.NotEqual(t, cli.ExitUsage, r.code, "a --database-url in CI was refused\n%s", r)
	require.False(t, strings.Contains(r.stderr, "no database URL"), "%s", r)
}
