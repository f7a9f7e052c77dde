package perf_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/cmd/ingest-bench/internal/perf"
)

// Bad command lines are usage errors, found before anything is generated
// or any database is touched (the URL points nowhere).
func TestMainUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-h"}, perf.ExitOK, "usage: ingest-bench"},
		{[]string{"-runs", "0"}, perf.ExitUsage, "-runs must be at least 1"},
		{[]string{"-points", "0"}, perf.ExitUsage, "-points must be at least 1"},
		{[]string{"-agentx", "-1"}, perf.ExitUsage, "must not be negative"},
		{[]string{"-format", "json"}, perf.ExitUsage, `-format "json" is not one of`},
		{[]string{"-log-level", "loud"}, perf.ExitUsage, "-log-level"},
		{[]string{"extra"}, perf.ExitUsage, `unexpected argument "extra"`},
		{[]string{"-no-such-flag"}, perf.ExitUsage, "flag provided but not defined"},
		{[]string{"-baseline", "/bin/true"}, perf.ExitUsage, "-baseline compares `ingest load` processes: it needs -processes"},
		{[]string{"-floor"}, perf.ExitUsage, "-floor measures what `ingest load` processes wrote: it needs -processes"},
		{[]string{"-cpuprofile", "cpu.prof", "-processes", "1"}, perf.ExitUsage, "-cpuprofile profiles the in-process passes"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-database-url", "postgres://nobody@127.0.0.1:1/none"}, tt.args...)
			code := perf.Main(context.Background(), args, perf.Env{Stdout: &stdout, Stderr: &stderr})
			require.Equal(t, tt.code, code, stderr.String())
			require.Contains(t, stderr.String(), tt.msg)
			require.Empty(t, stdout.String())
		})
	}
}

// -h lists every flag on a line of its own as "-name" or "-name VALUE",
// its value named by one word: a backquoted phrase in a flag's usage text
// would be taken as the value's name ("-processes ingest load").
func TestMainHelpFlagLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := perf.Main(context.Background(), []string{"-h"}, perf.Env{Stdout: &stdout, Stderr: &stderr})
	require.Equal(t, perf.ExitOK, code)
	flagLine := regexp.MustCompile(`^  -[a-z-]+( [A-Za-z]+)?$`)
	var flags int
	for _, line := range strings.Split(stderr.String(), "\n") {
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		flags++
		require.Regexp(t, flagLine, line)
	}
	require.Greater(t, flags, 10, stderr.String())
	for _, want := range []string{"  -processes N\n", "  -zip\n", "as separate processes", "as ingest run caches them"} {
		require.Contains(t, stderr.String(), want)
	}
}

// A server that cannot be reached fails the bench (exit 1) with the reason.
func TestMainUnreachableServer(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := perf.Main(context.Background(), []string{"-points", "1", "-dir", t.TempDir()},
		perf.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
			if k == "DATABASE_URL" {
				return "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"
			}
			return ""
		}})
	require.Equal(t, perf.ExitFailed, code)
	require.Contains(t, stderr.String(), "127.0.0.1:1")
	require.Empty(t, stdout.String())
}
