package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferencex/ingest/ingest/github"
)

// githubOpts are the options of the commands that talk to GitHub (run,
// backfill). The token comes from GITHUB_TOKEN, never from a flag.
type githubOpts struct {
	baseURL  *setting
	cacheDir *setting
	parallel *setting
}

func addGitHub(s *settings) *githubOpts {
	return &githubOpts{
		baseURL:  s.str("base-url", github.DefaultBaseURL, "GitHub REST API URL (GitHub Enterprise: https://HOST/api/v3)", "GITHUB_API_URL"),
		cacheDir: s.str("cache-dir", "", "artifact cache (default: the user cache directory, ingest/)", "INGEST_CACHE_DIR"),
		parallel: s.str("parallel", "8", "concurrent artifact downloads", "INGEST_DOWNLOAD_PARALLELISM"),
	}
}

// options resolves the client options for repo; an error is a usage
// error. tokenNeed says what the token must allow, for its message.
func (g *githubOpts) options(env Env, repo, tokenNeed string) (github.Options, error) {
	par, err := g.parallel.int64()
	if err != nil || par > 64 {
		return github.Options{}, fmt.Errorf("--parallel: %q is not an integer from 1 to 64", g.parallel.String())
	}
	token := strings.TrimSpace(env.Getenv("GITHUB_TOKEN"))
	if token == "" {
		return github.Options{}, errors.New("GITHUB_TOKEN is required (" + tokenNeed + ")")
	}
	cache := g.cacheDir.String()
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return github.Options{}, fmt.Errorf("no cache directory: pass --cache-dir (%v)", err)
		}
		cache = filepath.Join(dir, "ingest")
	}
	return github.Options{BaseURL: g.baseURL.String(), Token: token, Repo: repo, CacheDir: cache, Parallel: int(par)}, nil
}
