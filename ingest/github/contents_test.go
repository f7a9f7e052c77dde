package github_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/internal/fakegithub"
)

// TestReadFileAndPullRequest: a file of the contents API arrives decoded
// from its wrapped base64 (through a rate limit), a file absent on the ref
// is no error and not found, and a pull request gives its merge time and
// merge commit (zero when not merged); an unknown one is an error.
func TestReadFileAndPullRequest(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, testRepo, testToken)
	e := &env{fake: fake, cache: t.TempDir(), logs: &logBuffer{}}
	c := e.newClient(t, nil)
	body := bytes.Repeat([]byte("- config-keys: [dsr1-fp8-*]\n  pr-link: https://github.com/"+testRepo+"/pull/7\n"), 20)
	fake.SetFile("main", "perf-changelog.yaml", body)
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteContents, Kind: fakegithub.TooManyRequests, Times: 1})

	got, ok, err := c.ReadFile(t.Context(), "perf-changelog.yaml", "main")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, body, got)
	require.Equal(t, 2, fake.Count(fakegithub.RouteContents), "the rate-limited read was retried")

	_, ok, err = c.ReadFile(t.Context(), "perf-changelog.yaml", "other")
	require.NoError(t, err)
	require.False(t, ok, "absent on another branch")
	_, ok, err = c.ReadFile(t.Context(), "docs/none.yaml", "main")
	require.NoError(t, err)
	require.False(t, ok)

	at := time.Date(2026, 8, 3, 9, 30, 0, 0, time.UTC)
	fake.AddPull(fakegithub.Pull{Number: 7, MergeCommitSHA: "c0ffee", MergedAt: at})
	fake.AddPull(fakegithub.Pull{Number: 8})
	pr, err := c.GetPullRequest(t.Context(), 7)
	require.NoError(t, err)
	require.Equal(t, 7, pr.Number)
	require.Equal(t, "c0ffee", pr.MergeCommitSHA)
	require.True(t, at.Equal(pr.MergedAt))
	pr, err = c.GetPullRequest(t.Context(), 8)
	require.NoError(t, err)
	require.True(t, pr.MergedAt.IsZero())
	_, err = c.GetPullRequest(t.Context(), 9)
	require.ErrorContains(t, err, "pull request #9 of "+testRepo)
	require.Equal(t, 7, c.PRFromLink("https://github.com/"+testRepo+"/pull/7"))
	require.Equal(t, 0, c.PRFromLink("https://github.com/other/repo/pull/7"))
}
