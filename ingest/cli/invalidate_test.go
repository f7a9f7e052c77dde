package cli_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// fakeSite is the dashboard's invalidation endpoint answering status,
// counting the POSTs carrying the right bearer token.
type fakeSite struct {
	mu      sync.Mutex
	status  int
	posts   int
	badAuth int
}

func (f *fakeSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/invalidate" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer site-secret-8812" {
		f.badAuth++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	f.posts++
	w.WriteHeader(f.status)
}

func (f *fakeSite) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts, f.badAuth
}

// TestInvalidateAfterCommit: a committed ingest POSTs the invalidation
// once, with the token from the environment; a dry run and a rerun
// answered from the ledger do not; a site that keeps failing is retried,
// then a warning — the run stays committed and the exit code is the
// ingest's; a URL without a token is a usage error before anything is read.
func TestInvalidateAfterCommit(t *testing.T) {
	t.Parallel()
	site := &fakeSite{status: http.StatusOK}
	srv := httptest.NewServer(site)
	defer srv.Close()
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_INVALIDATE_URL": srv.URL + "/api/v1/invalidate",
		"INGEST_INVALIDATE_TOKEN": "site-secret-8812", "INGEST_INVALIDATE_BACKOFF": "1ms"}
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 3, RunID: 28400002831})

	r := run(t, vars, "load", dir)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, "dashboard cache invalidated (POST "+srv.URL+"/api/v1/invalidate: HTTP 200, attempt 1)")
	require.NotContains(t, r.stderr+r.stdout, "site-secret-8812")
	posts, bad := site.counts()
	require.Equal(t, 1, posts)
	require.Zero(t, bad)

	requireCode(t, cli.ExitOK, run(t, vars, "load", dir, "--dry-run"))
	requireCode(t, cli.ExitOK, run(t, vars, "load", dir)) // answered from the ledger: nothing changed
	posts, _ = site.counts()
	require.Equal(t, 1, posts, "a dry run or an unchanged rerun invalidated")

	site.mu.Lock()
	site.status = http.StatusBadGateway
	site.mu.Unlock()
	other, _ := genTree(t, generate.Options{Points: 2, Seed: 4, RunID: 28400002832})
	r = run(t, vars, "load", other, "--invalidate-attempts", "3")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, "ingest: warning: dashboard cache invalidation failed after 3 attempts")
	require.Contains(t, r.stderr, "HTTP 502; the data is committed")
	posts, _ = site.counts()
	require.Equal(t, 4, posts)
	require.Equal(t, []int64{28400002831, 28400002832}, queryInt64s(t, db, "SELECT DISTINCT github_run_id FROM workflow_runs ORDER BY 1"))

	noToken := map[string]string{"DATABASE_URL": unreachableURL, "INGEST_INVALIDATE_URL": srv.URL + "/api/v1/invalidate"}
	r = run(t, noToken, "load", dir)
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, "INGEST_INVALIDATE_TOKEN is not")
}

// TestInvalidateRedirectRedacted: a site that redirects the POST (307 to
// another port, which would receive the bearer token) fails the
// invalidation with a warning naming the target without its query, the
// target hears nothing, and a secret-looking query value of the URL is
// never printed.
func TestInvalidateRedirectRedacted(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Location", other.URL+"/api/v1/invalidate?sig=loc-secret-9031")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer site.Close()
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo,
		"INGEST_INVALIDATE_URL":   site.URL + "/api/v1/invalidate?scope=all&token=url-secret-4410",
		"INGEST_INVALIDATE_TOKEN": "site-secret-8812", "GITHUB_ACTIONS": "true"}
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 3, RunID: 28400002833})

	r := run(t, vars, "load", dir)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, "dashboard cache invalidation failed after 1 attempts (POST "+site.URL+"/api/v1/invalidate?scope=all&token=***): "+
		"redirected with HTTP 307 to "+other.URL+"/api/v1/invalidate, not followed")
	require.Contains(t, r.stderr, "::warning title=Cache invalidation failed::")
	for _, secret := range []string{"url-secret-4410", "loc-secret-9031", "site-secret-8812"} {
		require.NotContains(t, r.stderr+r.stdout, secret)
	}
	require.Zero(t, reached.Load(), "the redirect target was reached")
}
