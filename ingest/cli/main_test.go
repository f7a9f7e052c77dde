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
		name     string
		args     []string
		wantCode int
		// onStderr: the help of a usage error goes to stderr, asked-for
		// help to stdout.
		onStderr bool
	}{
		{"no arguments", nil, cli.ExitUsage, true},
		{"help", []string{"help"}, cli.ExitOK, false},
		{"-h", []string{"-h"}, cli.ExitOK, false},
		{"--help", []string{"--help"}, cli.ExitOK, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, nil, tt.args...)
			requireCode(t, tt.wantCode, r)
			help, other := r.stdout, r.stderr
			if tt.onStderr {
				help, other = r.stderr, r.stdout
			}
			require.Empty(t, other)
			for _, want := range []string{
				"ingest loads InferenceX benchmark runs into PostgreSQL",
				"Available Commands:",
				"  load ", "  demo ", "  backfill ", "  status ", "  report ", "  migrate ", "  version ",
				"flag > environment > default",
				"Exit codes: 0 success, 1 aborted (nothing written), 2 usage, 3 written with failures,\n4 refused by the coverage guard.",
			} {
				require.Contains(t, help, want)
			}
		})
	}
}

// TestCommandHelp: each command's help lists its own options, typed, with
// their variables and defaults, on stdout, before anything connects (the
// database is unreachable), and only the options the command uses.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"load", "-h"}, []string{"ingest load DIR [flags]", "--database-url string", "DATABASE_WRITE_URL, DATABASE_URL", "--dry-run ",
			"INGEST_DRY_RUN", "--run-id int", "INGEST_RUN_ID", "--format text|md|json", "--no-migrate"}, []string{"--comment-author", "--base-url"}},
		{[]string{"demo", "--help"}, []string{"ingest demo [flags]", "--format text|md|json", "(env INGEST_REPORT_FORMAT) (default text)"}, []string{"--artifacts"}},
		{[]string{"report", "-h"}, []string{"ingest report --run-id N [flags]", "--attempt int", "(env INGEST_REPORT_FORMAT) (default md)"}, []string{"--no-migrate", "--dry-run"}},
		{[]string{"migrate", "version", "-h"}, []string{"ingest migrate version [flags]", "--database-url"}, []string{"--no-migrate"}},
		{[]string{"run", "--help"}, []string{"--comment-author", "--parallel int", "--download-budget size", "--fetch-timeout duration", "GH_TOKEN"}, nil},
		{[]string{"audit", "--help"}, []string{"--base-url", "--format text|json", "INGEST_AUDIT_FORMAT"}, []string{"--parallel", "--cache-dir", "--comment-author", "--no-migrate"}},
		{[]string{"status", "--help"}, []string{"--limit int", "(default 20)", "INGEST_STATUS_FORMAT"}, []string{"--no-migrate", "INGEST_REPORT_FORMAT"}},
		{[]string{"refresh", "--help"}, []string{"--format text|json", "INGEST_REFRESH_FORMAT"}, []string{"INGEST_REPORT_FORMAT"}},
		{[]string{"overrides", "apply", "--help"}, []string{"--format text|json", "INGEST_OVERRIDES_FORMAT", "--no-migrate"}, []string{"INGEST_REPORT_FORMAT"}},
		{[]string{"supplemental", "--help"}, []string{"--date string"}, []string{"--run-id", "--attempt", "--repo"}},
		{[]string{"preview", "--help"}, []string{"--run-id int", "--cache-dir"}, []string{"--database-url", "--log-level"}},
		{[]string{"help", "load"}, []string{"ingest load DIR [flags]", "--run-id int"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, tt.args...)
			requireCode(t, cli.ExitOK, r)
			require.Empty(t, r.stderr)
			for _, want := range tt.want {
				require.Contains(t, r.stdout, want)
			}
			for _, not := range tt.notWant {
				require.NotContains(t, r.stdout, not)
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
