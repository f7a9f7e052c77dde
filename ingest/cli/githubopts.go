package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/github"
)

// githubOpts are the options of the commands that talk to GitHub (run,
// backfill). The token comes from GH_TOKEN, else GITHUB_TOKEN (gh's
// order), never from a flag.
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
		baseURL:  s.str("base-url", github.DefaultBaseURL, "GitHub REST API URL (GitHub Enterprise: https://HOST/api/v3)", "GITHUB_API_URL"),
		cacheDir: s.str("cache-dir", "", "artifact cache (default: the user cache directory, ingest/)", "INGEST_CACHE_DIR"),
		parallel: s.str("parallel", "8", "concurrent artifact downloads", "INGEST_DOWNLOAD_PARALLELISM"),
		budget: s.str("download-budget", "50GiB", "most bytes one fetch writes to the cache, every try counted (a listing adding up to more is refused; units B, KB, MB, GB, KiB, MiB, GiB)",
			"INGEST_DOWNLOAD_BUDGET"),
		minRate: s.str("min-download-rate", "128KiB", "slowest download accepted, per second: one try must end within its listed size at this rate plus 2 minutes",
			"INGEST_MIN_DOWNLOAD_RATE"),
		fetchTimeout: s.str("fetch-timeout", "2h", "longest fetch of a run from GitHub, listing, downloads and retries included", "INGEST_FETCH_TIMEOUT"),
		commentAuthor: s.str("comment-author", github.AppCommentAuthor,
			"login the token posts comments as, when GET /user is refused to it (an installation token): only its comments are edited", "INGEST_COMMENT_AUTHOR"),
	}
}

// byteSize parses a size such as 50GiB, 500MB, 128KiB or 1048576.
func (it *setting) byteSize() (int64, error) {
	v := strings.TrimSpace(it.value)
	num := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(v[len(num):])
	mult, ok := map[string]int64{"": 1, "B": 1, "KB": 1000, "MB": 1000 * 1000, "GB": 1000 * 1000 * 1000,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%s: %q is not a positive size (such as 50GiB, 500MB or 1048576)", it.label(), it.value)
	}
	return n * mult, nil
}

// options resolves the client options for repo; an error is a usage
// error. tokenNeed says what the token must allow, for its message.
func (g *githubOpts) options(env Env, repo, tokenNeed string) (github.Options, error) {
	par, err := g.parallel.int64()
	if err != nil || par > 64 {
		return github.Options{}, fmt.Errorf("--parallel: %q is not an integer from 1 to 64", g.parallel.String())
	}
	token := githubToken(env)
	if token == "" {
		return github.Options{}, errors.New("GITHUB_TOKEN is required, or GH_TOKEN (" + tokenNeed + ")")
	}
	cache := g.cacheDir.String()
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return github.Options{}, fmt.Errorf("no cache directory: pass --cache-dir (%v)", err)
		}
		cache = filepath.Join(dir, "ingest")
	}
	budget, err := g.budget.byteSize()
	if err != nil {
		return github.Options{}, err
	}
	rate, err := g.minRate.byteSize()
	if err != nil {
		return github.Options{}, err
	}
	fetchTimeout, err := time.ParseDuration(g.fetchTimeout.String())
	if err != nil || fetchTimeout <= 0 {
		return github.Options{}, fmt.Errorf("%s: %q is not a positive duration (such as 90s, 30m or 2h)", g.fetchTimeout.label(), g.fetchTimeout.String())
	}
	return github.Options{BaseURL: g.baseURL.String(), Token: token, Repo: repo, CacheDir: cache, Parallel: int(par),
		DownloadBudget: budget, MinRate: rate, FetchTimeout: fetchTimeout, CommentAuthor: g.commentAuthor.String(),
		StallTimeout: time.Minute}, nil
}

// githubToken is the token for the GitHub API, where gh looks for it:
// GH_TOKEN first, then GITHUB_TOKEN.
func githubToken(env Env) string {
	if t := strings.TrimSpace(env.Getenv("GH_TOKEN")); t != "" {
		return t
	}
	return strings.TrimSpace(env.Getenv("GITHUB_TOKEN"))
}
