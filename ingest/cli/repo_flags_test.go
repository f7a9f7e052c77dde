package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
)

// TestRepoFlagGitHubRules: every command taking --repo refuses, as a
// usage error naming the option before anything is read, a value GitHub
// cannot have as OWNER/NAME — Markdown, a space, a path.
func TestRepoFlagGitHubRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commands := [][]string{
		{"load", dir, "--run-id", "1"},
		{"demo"},
		{"run", "--run-id", "1"},
		{"backfill", "--since", "2026-01-01"},
		{"audit", "--since", "2026-01-01"},
		{"preview", "--run-id", "1"},
		{"verify", "--run-id", "1"},
	}
	vars := map[string]string{"DATABASE_URL": unreachableURL, "GITHUB_TOKEN": "t"}
	for _, bad := range []string{"a/b)[x](https://e.example)", "a/b c", "../../x/y", "-a/b", "a--b/c", "a_b/c", "a/..", "a/b/c"} {
		for _, args := range commands {
			r := run(t, vars, append(args, "--repo", bad)...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, `invalid value "`+bad+`" for --repo: want OWNER/NAME`, "%s", args[0])
		}
	}
	r := run(t, map[string]string{"DATABASE_URL": unreachableURL, "INGEST_REPO": "a/b c"}, "load", dir, "--run-id", "1")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `invalid value "a/b c" for --repo (from INGEST_REPO): want OWNER/NAME`)
}

// TestRunURLOnGitHubHost: --run-url must be an http(s) URL on github.com
// or on the web host of the configured GitHub API (GITHUB_API_URL, or
// --base-url for run); another is a usage error before anything is read.
func TestRunURLOnGitHubHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const ghes = "https://ghe.example.com/api/v3"
	for _, tc := range []struct {
		name   string
		args   []string
		vars   map[string]string
		refuse bool
	}{
		{"github.com", []string{"load", dir, "--run-url", "https://github.com/o/r/actions/runs/1"}, nil, false},
		{"another host", []string{"load", dir, "--run-url", "https://evil.example/o/r/actions/runs/1"}, nil, true},
		{"api host is not the web host", []string{"load", dir, "--run-url", "https://api.github.com/o/r"}, nil, true},
		{"not http", []string{"load", dir, "--run-url", "javascript:alert(1)"}, nil, true},
		{"credentials", []string{"load", dir, "--run-url", "https://u:p@github.com/o/r"}, nil, true},
		{"GHES from GITHUB_API_URL", []string{"load", dir, "--run-url", "https://ghe.example.com/o/r/actions/runs/1"},
			map[string]string{"GITHUB_API_URL": ghes}, false},
		{"GHES host without GITHUB_API_URL", []string{"load", dir, "--run-url", "https://ghe.example.com/o/r/actions/runs/1"}, nil, true},
		{"GHE.com data residency", []string{"load", dir, "--run-url", "https://acme.ghe.com/o/r/actions/runs/1"},
			map[string]string{"GITHUB_API_URL": "https://api.acme.ghe.com"}, false},
		{"run: --base-url wins over GITHUB_API_URL", []string{"run", "--base-url", ghes, "--run-url", "https://ghe.example.com/o/r/actions/runs/1"},
			map[string]string{"GITHUB_API_URL": "https://api.github.com"}, false},
		{"run: the GitHub in use is --base-url's", []string{"run", "--base-url", ghes, "--run-url", "https://other.example.com/o/r"}, nil, true},
	} {
		vars := map[string]string{"DATABASE_URL": unreachableURL, "GITHUB_TOKEN": "t"}
		for k, v := range tc.vars {
			vars[k] = v
		}
		r := run(t, vars, append(tc.args, "--run-id", "1")...)
		if tc.refuse {
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, "for --run-url: want an http(s) URL on github.com", tc.name)
			require.NotContains(t, r.stderr, "u:p@", tc.name)
			continue
		}
		// Accepted: the command goes on to the (unreachable) database.
		requireCode(t, cli.ExitAborted, r)
	}
}
