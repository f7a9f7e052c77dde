package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/github"
)

// githubOpts are the options of the commands that talk to GitHub. The
// token comes from GH_TOKEN, else GITHUB_TOKEN (gh's order), never from a
// flag. The download options are declared only by the commands that
// download (addDownloads), --comment-author only by the one that comments.
type githubOpts struct {
	baseURL       *setting
	cacheDir      *setting
	parallel      *setting
	budget        *setting
	minRate       *setting
	fetchTimeout  *setting
	commentAuthor *setting
}

func addGitHub(s *settings) *githubOpts {
	return &githubOpts{
		baseURL: s.str("base-url", github.DefaultBaseURL, "GitHub REST API URL (GitHub Enterprise: https://HOST/api/v3)", "GITHUB_API_URL"),
	}
}

// addDownloads declares the options of a command that downloads a run's
// artifacts.
func (g *githubOpts) addDownloads(s *settings) *githubOpts {
	g.cacheDir = s.str("cache-dir", "", "artifact cache (default: the user cache directory, ingest/)", "INGEST_CACHE_DIR")
	g.parallel = s.intIn("parallel", "8", 1, 64, "concurrent artifact downloads", "INGEST_DOWNLOAD_PARALLELISM")
	g.budget = s.size("download-budget", "50GiB", "most bytes one fetch writes to the cache, every try counted (a listing adding up to more is refused)",
		"INGEST_DOWNLOAD_BUDGET")
	g.minRate = s.size("min-download-rate", "128KiB", "slowest download accepted, per second: one try must end within its listed size at this rate plus 2 minutes",
		"INGEST_MIN_DOWNLOAD_RATE")
	g.fetchTimeout = s.duration("fetch-timeout", "2h", "longest fetch of a run from GitHub, listing, downloads and retries included", func(d time.Duration) error {
		if d <= 0 {
			return errors.New("want a positive duration such as 90s, 30m or 2h")
		}
		return nil
	}, "INGEST_FETCH_TIMEOUT")
	return g
}

// addCommentAuthor declares --comment-author, for the command that posts
// the report.
func (g *githubOpts) addCommentAuthor(s *settings) *githubOpts {
	g.commentAuthor = s.str("comment-author", github.AppCommentAuthor,
		"login the token posts comments as, when GET /user is refused to it (an installation token): only its comments are edited", "INGEST_COMMENT_AUTHOR")
	return g
}

// options resolves the client options for repo; an error is a usage
// error. tokenNeed says what the token must allow, for its message; ""
// lets the command go on without one (it reads the archive only).
func (g *githubOpts) options(env Env, repo, tokenNeed string) (github.Options, error) {
	token := githubToken(env)
	if token == "" && tokenNeed != "" {
		return github.Options{}, errors.New("GITHUB_TOKEN is required, or GH_TOKEN (" + tokenNeed + ")")
	}
	o := github.Options{BaseURL: g.baseURL.String(), Token: token, Repo: repo, StallTimeout: time.Minute, Retry: env.Retry}
	if g.commentAuthor != nil {
		o.CommentAuthor = g.commentAuthor.String()
	}
	if g.cacheDir != nil {
		o.CacheDir = g.cacheDir.String()
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return github.Options{}, fmt.Errorf("no cache directory: pass --cache-dir (%v)", err)
		}
		o.CacheDir = filepath.Join(dir, "ingest")
	}
	if g.cacheDir == nil {
		return o, nil // a command that downloads nothing
	}
	o.Parallel = int(g.parallel.int64())
	o.DownloadBudget, o.MinRate, o.FetchTimeout = g.budget.bytes(), g.minRate.bytes(), g.fetchTimeout.duration()
	return o, nil
}

// githubToken is the token for the GitHub API, where gh looks for it:
// GH_TOKEN first, then GITHUB_TOKEN.
func githubToken(env Env) string {
	if t := strings.TrimSpace(env.Getenv("GH_TOKEN")); t != "" {
		return t
	}
	return strings.TrimSpace(env.Getenv("GITHUB_TOKEN"))
}
