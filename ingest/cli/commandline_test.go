package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
)

// TestVersionFlag: --version, -v and the version command print the same
// one line on stdout.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	want := run(t, nil, "version")
	requireCode(t, cli.ExitOK, want)
	require.True(t, strings.HasPrefix(want.stdout, "ingest "), want.stdout)
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		r := run(t, nil, args...)
		requireCode(t, cli.ExitOK, r)
		require.Equal(t, want.stdout, r.stdout, "%v", args)
		require.Empty(t, r.stderr)
	}
}

// TestHelpForms: every way of asking for help answers on stdout with exit
// 0, before anything connects, for commands and actions alike.
func TestHelpForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help", "load"}, "ingest load DIR [flags]"},
		{[]string{"load", "--help"}, "ingest load DIR [flags]"},
		{[]string{"load", "-h"}, "ingest load DIR [flags]"},
		{[]string{"help", "migrate"}, "ingest migrate [command]"},
		{[]string{"migrate", "--help"}, "ingest migrate [command]"},
		{[]string{"migrate", "-h"}, "ingest migrate [command]"},
		{[]string{"migrate", "up", "--help"}, "ingest migrate up [flags]"},
		{[]string{"help", "migrate", "down"}, "ingest migrate down [N] [flags]"},
		{[]string{"reader", "create", "--help"}, "ingest reader create ROLE [flags]"},
		{[]string{"datasets", "--help"}, "ingest datasets [command]"},
		{[]string{"overrides", "apply", "-h"}, "ingest overrides apply [flags]"},
		{[]string{"export", "telemetry", "--help"}, "ingest export telemetry --run-id N --out FILE.parquet [flags]"},
		// Help wins over an invalid value in the environment.
		{[]string{"status", "--help"}, "ingest status [flags]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := run(t, map[string]string{"DATABASE_URL": unreachableURL, "INGEST_STATUS_LIMIT": "lots"}, tt.args...)
			requireCode(t, cli.ExitOK, r)
			require.Contains(t, r.stdout, "Usage:\n  "+tt.want)
			require.Contains(t, r.stdout, "flag > environment > default")
			require.Empty(t, r.stderr)
		})
	}
}

// TestUsageErrors: a wrong command line is exit 2 and a short error on
// stderr — the error (naming the environment variable when the value came
// from one), a suggestion when something is close, and where the help is —
// never the whole usage, and before anything connects.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string // the whole of stderr
	}{
		{"unknown flag, close to one", []string{"load", "--dry-rn"}, nil,
			"ingest load: unknown flag: --dry-rn\nDid you mean --dry-run?\nRun 'ingest load --help' for usage.\n"},
		{"unknown flag, a prefix of one", []string{"status", "--lim", "3"}, nil,
			"ingest status: unknown flag: --lim\nDid you mean --limit?\nRun 'ingest status --help' for usage.\n"},
		{"unknown flag, nothing close", []string{"status", "--frobnicate"}, nil,
			"ingest status: unknown flag: --frobnicate\nRun 'ingest status --help' for usage.\n"},
		{"flag of another command", []string{"status", "--comment-author", "x"}, nil,
			"ingest status: unknown flag: --comment-author\nRun 'ingest status --help' for usage.\n"},
		{"unknown one-dash flag", []string{"load", "-dry-rn"}, nil,
			"ingest load: unknown flag: -dry-rn (flags take two dashes: --dry-rn)\nDid you mean --dry-run?\nRun 'ingest load --help' for usage.\n"},
		{"unknown command", []string{"lod", "--database-url", unreachableURL}, nil,
			"ingest: unknown command \"lod\"\nDid you mean \"load\"?\nRun 'ingest --help' for usage.\n"},
		{"unknown command, nothing close", []string{"frobnicate"}, nil,
			"ingest: unknown command \"frobnicate\"\nRun 'ingest --help' for usage.\n"},
		{"flag instead of a command", []string{"--database-url", unreachableURL}, nil,
			"ingest: unknown flag: --database-url\nRun 'ingest --help' for usage.\n"},
		{"unknown action", []string{"migrate", "upp"}, nil,
			"ingest migrate: unknown action \"upp\" (up, down, force, version)\nDid you mean \"up\"?\nRun 'ingest migrate --help' for usage.\n"},
		{"no action", []string{"export"}, nil,
			"ingest export: name an action: telemetry\nRun 'ingest export --help' for usage.\n"},
		{"extra argument", []string{"status", "now"}, nil,
			"ingest status: unexpected argument \"now\"\nRun 'ingest status --help' for usage.\n"},
		{"integer flag", []string{"status", "--limit", "x"}, nil,
			"ingest status: invalid value \"x\" for --limit: want an integer from 1 to 10000\nRun 'ingest status --help' for usage.\n"},
		{"integer from the environment", []string{"status"}, map[string]string{"INGEST_STATUS_LIMIT": "lots"},
			"ingest status: invalid value \"lots\" for --limit (from INGEST_STATUS_LIMIT): want an integer from 1 to 10000\nRun 'ingest status --help' for usage.\n"},
		{"enum from the environment", []string{"report", "--run-id", "1"}, map[string]string{"INGEST_REPORT_FORMAT": "x"},
			"ingest report: invalid value \"x\" for --format (from INGEST_REPORT_FORMAT): want text|md|json\nRun 'ingest report --help' for usage.\n"},
		{"enum flag", []string{"load", "--coverage-guard", "maybe"}, nil,
			"ingest load: invalid value \"maybe\" for --coverage-guard: want warn|refuse\nRun 'ingest load --help' for usage.\n"},
		{"bool flag", []string{"demo", "--dry-run=perhaps"}, nil,
			"ingest demo: invalid value \"perhaps\" for --dry-run: want true or false (1, yes, on; 0, no, off)\nRun 'ingest demo --help' for usage.\n"},
		{"bool from the environment", []string{"demo"}, map[string]string{"INGEST_DRY_RUN": "perhaps"},
			"ingest demo: invalid value \"perhaps\" for --dry-run (from INGEST_DRY_RUN): want true or false (1, yes, on; 0, no, off)\nRun 'ingest demo --help' for usage.\n"},
		{"duration flag", []string{"run", "--run-id", "1", "--fetch-timeout", "0s"}, nil,
			"ingest run: invalid value \"0s\" for --fetch-timeout: want a positive duration such as 90s, 30m or 2h\nRun 'ingest run --help' for usage.\n"},
		{"duration from the environment", []string{"load", "."}, map[string]string{"INGEST_INVALIDATE_BACKOFF": "2m"},
			"ingest load: invalid value \"2m\" for --invalidate-backoff (from INGEST_INVALIDATE_BACKOFF): want a duration from 0 to 1m\nRun 'ingest load --help' for usage.\n"},
		{"size flag", []string{"backfill", "--download-budget", "5XB"}, nil,
			"ingest backfill: invalid value \"5XB\" for --download-budget: want a positive size such as 50GiB, 500MB or 1048576 (units B, KB, MB, GB, KiB, MiB, GiB)\nRun 'ingest backfill --help' for usage.\n"},
		{"run id flag", []string{"verify", "--run-id", "12x"}, nil,
			"ingest verify: invalid value \"12x\" for --run-id: want a positive integer\nRun 'ingest verify --help' for usage.\n"},
		{"old single-dash form, invalid value", []string{"load", ".", "-run-id", "abc"}, nil,
			"ingest: warning: -run-id is the old single-dash form: write --run-id\n" +
				"ingest load: invalid value \"abc\" for --run-id: want a positive integer\nRun 'ingest load --help' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"DATABASE_URL": unreachableURL}
			for k, v := range tt.vars {
				vars[k] = v
			}
			r := run(t, vars, tt.args...)
			requireCode(t, cli.ExitUsage, r)
			require.Equal(t, tt.want, r.stderr)
			require.Empty(t, r.stdout)
		})
	}
}
