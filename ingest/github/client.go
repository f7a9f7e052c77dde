package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"go.uber.org/zap"
)

// DefaultBaseURL is the REST API of github.com. GitHub Enterprise Server
// answers at https://HOST/api/v3 (what Actions puts in GITHUB_API_URL).
const DefaultBaseURL = "https://api.github.com/"

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
	// Log receives structured lines; nil is silent.
	Log *zap.Logger
	// Progress shows downloads; nil logs progress lines instead.
	Progress Progress
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
		return nil, fmt.Errorf("GitHub API base URL %q is not an http(s) URL", o.BaseURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 60 * time.Second
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
	return c, nil
}

// SplitRepo splits OWNER/NAME.
func SplitRepo(full string) (owner, repo string, err error) {
	owner, repo, ok := strings.Cut(full, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") || !safeSegment(owner) || !safeSegment(repo) {
		return "", "", fmt.Errorf("repository %q is not OWNER/NAME", full)
	}
	return owner, repo, nil
}

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
