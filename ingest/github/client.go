package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"go.uber.org/zap"
)

// DefaultBaseURL is the REST API of github.com. GitHub Enterprise Server
// answers at https://HOST/api/v3 (what Actions puts in GITHUB_API_URL).
const DefaultBaseURL = "https://api.github.com/"

// Defaults of Options.
const (
	DefaultMinRate        = 128 << 10 // bytes per second
	DefaultFetchTimeout   = 2 * time.Hour
	DefaultDownloadBudget = 50 << 30 // bytes
	// AppCommentAuthor is who GITHUB_TOKEN (an Actions installation
	// token) posts comments as.
	AppCommentAuthor = "github-actions[bot]"
)

// Options configure a Client. Zero values take the defaults noted.
type Options struct {
	// BaseURL of the REST API (default DefaultBaseURL).
	BaseURL string
	// Token authenticates API requests (GITHUB_TOKEN). It is sent to the
	// API host only: never to blob storage, never logged.
	Token string
	// Repo is OWNER/NAME.
	Repo string
	// CacheDir holds downloaded artifacts by id and the run trees built
	// from them.
	CacheDir string
	// Parallel bounds concurrent downloads (default 8).
	Parallel int
	// Retry is the policy for transient faults and rate limits.
	Retry RetryPolicy
	// RequestTimeout bounds one API request (default 30 s).
	RequestTimeout time.Duration
	// StallTimeout aborts (and retries) a download that receives no byte
	// for this long (default 60 s).
	StallTimeout time.Duration
	// MinRate is the slowest download accepted, in bytes per second
	// (default DefaultMinRate): one try of a download must end within its
	// listed size at this rate plus twice StallTimeout, however steadily
	// bytes trickle in.
	MinRate int64
	// FetchTimeout bounds a whole Fetch, downloads and retries included
	// (default DefaultFetchTimeout).
	FetchTimeout time.Duration
	// DownloadBudget bounds the bytes one Fetch writes to the cache, every
	// try counted (default DefaultDownloadBudget). A listing whose sizes
	// add up to more is refused before any download.
	DownloadBudget int64
	// CommentAuthor is whom the token posts comments as when the API will
	// not say (GET /user is refused to an installation token such as
	// GITHUB_TOKEN); default AppCommentAuthor.
	CommentAuthor string
	// Log receives structured lines; nil is silent.
	Log *zap.Logger
	// Progress shows downloads; nil logs progress lines instead.
	Progress Progress
	// Archive, when set, is read for artifacts GitHub no longer has
	// (Request.Source).
	Archive Archive
	// HTTPClient is the base client for API requests (its transport is
	// wrapped to add the token); nil uses a default one.
	HTTPClient *http.Client
}

// Client talks to one repository.
type Client struct {
	gh    *gogithub.Client
	blob  *http.Client
	owner string
	repo  string
	opts  Options
	log   *zap.Logger
}

// New builds a client. It fails on a malformed repository or base URL.
func New(o Options) (*Client, error) {
	owner, repo, err := SplitRepo(o.Repo)
	if err != nil {
		return nil, err
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(o.BaseURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("GitHub API base URL %q is not an http(s) URL", RedactURLText(o.BaseURL))
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	// Credentials in the URL would be echoed by every error that names a
	// request: the token is the one credential, so they are dropped.
	hadUser := base.User != nil
	base.User = nil
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 60 * time.Second
	}
	if o.MinRate <= 0 {
		o.MinRate = DefaultMinRate
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.DownloadBudget <= 0 {
		o.DownloadBudget = DefaultDownloadBudget
	}
	if o.CommentAuthor == "" {
		o.CommentAuthor = AppCommentAuthor
	}
	o.Retry = o.Retry.withDefaults()
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.CacheDir == "" {
		return nil, errors.New("no cache directory")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	gh := gogithub.NewClient(hc)
	if o.Token != "" {
		gh = gh.WithAuthToken(o.Token)
	}
	gh.BaseURL = base
	gh.UserAgent = "inferencex-ingest"
	c := &Client{
		gh: gh,
		// Blob storage gets a client of its own: no token, and a redirect
		// never carries anything but the signed URL.
		blob:  &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		owner: owner,
		repo:  repo,
		opts:  o,
		log:   o.Log.Named("github"),
	}
	if hadUser {
		c.log.Warn("the GitHub API base URL carries credentials: they are ignored (the token authenticates)",
			zap.String("base_url", base.String()))
	}
	return c, nil
}

// SplitRepo splits OWNER/NAME, each part as GitHub allows it (CheckRepo).
func SplitRepo(full string) (owner, repo string, err error) {
	if err := CheckRepo(full); err != nil {
		return "", "", fmt.Errorf("repository %q: %w", full, err)
	}
	owner, repo, _ = strings.Cut(full, "/")
	return owner, repo, nil
}

// CheckRepo says why full is not a repository as GitHub names one (nil
// when it is): OWNER/NAME, the owner 1 to 39 letters, digits or single
// hyphens, neither first nor last; the name 1 to 100 letters, digits,
// ".", "-" or "_", and not "." or "..". Anything else would reach a URL
// path, the report or the ledger as a repository GitHub cannot have.
func CheckRepo(full string) error {
	const want = "want OWNER/NAME (owner: 1-39 letters, digits or single hyphens, not first or last; " +
		"name: 1-100 letters, digits, '.', '-' or '_', not . or ..)"
	owner, name, ok := strings.Cut(full, "/")
	if !ok || !validOwner(owner) || !validRepoName(name) {
		return errors.New(want)
	}
	return nil
}

func validOwner(s string) bool {
	if len(s) == 0 || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func validRepoName(s string) bool { return len(s) > 0 && len(s) <= 100 && safeSegment(s) }

// safeSegment reports whether s can be one segment of a URL path as is.
func safeSegment(s string) bool {
	if s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// WebHost is the host (with its port, if any) of the web UI of the GitHub
// whose REST API is at baseURL: github.com for api.github.com,
// SUBDOMAIN.ghe.com for api.SUBDOMAIN.ghe.com (GitHub Enterprise Cloud
// with data residency), and HOST itself for GitHub Enterprise Server's
// https://HOST/api/v3.
func WebHost(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("GitHub API URL %q is not an http(s) URL", RedactURLText(baseURL))
	}
	host := strings.ToLower(u.Host)
	switch {
	case host == "api.github.com":
		return "github.com", nil
	case strings.HasPrefix(host, "api.") && strings.HasSuffix(host, ".ghe.com"):
		return strings.TrimPrefix(host, "api."), nil
	}
	return host, nil
}

// redactURL drops the query (a signed blob URL's signature) and any user
// information from u for messages.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// userinfo is the user information of URLs in a text.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]*@`)

// RedactURLText replaces the user information (user:password@) of every
// URL in s with "***@", and the value of every query parameter whose name
// looks secret (secretParam: ?token=…, &sig=…) with "***", for messages,
// reports and the ledger.
func RedactURLText(s string) string {
	if strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}***@")
	}
	if strings.Contains(s, "=") {
		s = queryParam.ReplaceAllStringFunc(s, func(m string) string {
			sub := queryParam.FindStringSubmatch(m)
			if !secretParam(sub[2]) {
				return m
			}
			return sub[1] + sub[2] + "=***"
		})
	}
	return s
}

// queryParam is a query parameter in a text: the "?" or "&" before it, its
// name and its value.
var queryParam = regexp.MustCompile(`([?&;])([^=&#?;\s"'<>]+)=([^&#;\s"'<>]*)`)

// secretParam reports whether a query parameter of this name may carry a
// credential: its name (percent-decoded, any case) holds token, secret,
// key, sig (signature), pass (password), auth or credential. Naming a
// harmless parameter secret only hides its value from a message.
func secretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, w := range []string{"token", "secret", "key", "sig", "pass", "auth", "credential"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
