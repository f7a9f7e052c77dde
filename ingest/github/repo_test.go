package github_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
)

// TestCheckRepo holds GitHub's rules for OWNER/NAME.
func TestCheckRepo(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"SemiAnalysisAI/InferenceX", "a/b", "a-b-c/d.e_f-g", "o/.github", "o/...",
		strings.Repeat("a", 39) + "/" + strings.Repeat("n", 100), "0/0"} {
		require.NoError(t, github.CheckRepo(ok), ok)
	}
	for _, bad := range []string{"", "a", "a/", "/b", "a/b/c", "a/b)[x](https://e.example)", "a/b c", "../../x/y",
		"-a/b", "a-/b", "a--b/c", "a_b/c", "a.b/c", "a/.", "a/..", "a/b\n", "a/b?c", "a/ä",
		strings.Repeat("a", 40) + "/b", "a/" + strings.Repeat("n", 101)} {
		require.Error(t, github.CheckRepo(bad), bad)
		_, _, err := github.SplitRepo(bad)
		require.Error(t, err, bad)
	}
	owner, name, err := github.SplitRepo("SemiAnalysisAI/InferenceX")
	require.NoError(t, err)
	require.Equal(t, []string{"SemiAnalysisAI", "InferenceX"}, []string{owner, name})
}

func TestWebHost(t *testing.T) {
	t.Parallel()
	for api, want := range map[string]string{
		"https://api.github.com/":          "github.com",
		"https://API.GitHub.com":           "github.com",
		"https://ghe.example.com/api/v3":   "ghe.example.com",
		"https://ghe.example.com:8443/api": "ghe.example.com:8443",
		"https://api.acme.ghe.com":         "acme.ghe.com",
		"http://127.0.0.1:3000/":           "127.0.0.1:3000",
	} {
		got, err := github.WebHost(api)
		require.NoError(t, err, api)
		require.Equal(t, want, got, api)
	}
	_, err := github.WebHost("ftp://x")
	require.Error(t, err)
}
