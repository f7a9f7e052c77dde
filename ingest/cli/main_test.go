package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
)

func TestMainUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr []string
	}{
		{"no arguments", nil, cli.ExitUsage, nil},
		{"help", []string{"help"}, cli.ExitOK, nil},
		{"-h", []string{"-h"}, cli.ExitOK, nil},
		{"--help", []string{"--help"}, cli.ExitOK, nil},
		{"unknown command", []string{"frobnicate", "--database-url", unreachableURL}, cli.ExitUsage,
			[]string{`ingest: unknown command "frobnicate"`}},
		{"flag instead of a command", []string{"--database-url", unreachableURL}, cli.ExitUsage,
			[]string{`unknown command "--database-url"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, nil, tt.args...)
			requireCode(t, tt.wantCode, r)
			require.Empty(t, r.stdout, "usage goes to stderr")
			for _, want := range append(tt.wantStderr,
				"ingest loads InferenceX benchmark runs into PostgreSQL",
				"Commands:",
				"  load ", "  demo ", "  backfill ", "  status ", "  report ", "  migrate ", "  version ",
				"flag > environment > default",
				"Exit codes: 0 success, 1 aborted (nothing written), 2 usage, 3 written with failures.",
			) {
				require.Contains(t, r.stderr, want)
			}
		})
	}
}

func TestCommandHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"load", "-h"}, []string{"usage: ingest load DIR", "-database-url", "DATABASE_WRITE_URL, DATABASE_URL", "-dry-run", "INGEST_DRY_RUN", "-run-id", "INGEST_RUN_ID"}},
		{[]string{"demo", "--help"}, []string{"usage: ingest demo", "-format", "INGEST_REPORT_FORMAT"}},
		{[]string{"report", "-h"}, []string{"usage: ingest report --run-id N", "-attempt"}},
		{[]string{"migrate", "version", "-h"}, []string{"usage: ingest migrate up|down [N]|force N|version", "-no-migrate"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			// An unreachable database proves -h answers before connecting.
			r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, tt.args...)
			requireCode(t, cli.ExitOK, r)
			for _, want := range tt.want {
				require.Contains(t, r.stderr, want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	// A nil Getenv is allowed: Main supplies an empty environment.
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"version"}, cli.Env{Stdout: &stdout, Stderr: &stderr})
	require.Equal(t, cli.ExitOK, code, stderr.String())
	line := strings.TrimSuffix(stdout.String(), "\n")
	require.True(t, strings.HasPrefix(line, "ingest "), "version line %q", line)
	require.NotEmpty(t, strings.TrimSpace(strings.TrimPrefix(line, "ingest ")), "version line %q", line)
	require.NotContains(t, line, "\n", "one line")
	require.Empty(t, stderr.String())
}
