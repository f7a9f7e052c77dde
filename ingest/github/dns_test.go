package github_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
)

// A host name that does not resolve fails at once with the resolver's
// answer; a resolver that times out is tried again, as before.
func TestFetchUnresolvableHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		dnsErr    *net.DNSError
		wantDials int64
		wantErr   string
	}{
		{"no such host: one try", &net.DNSError{Err: "no such host", Name: "api.gihtub.com", IsNotFound: true}, 1, "no such host"},
		{"resolver timeout: every try", &net.DNSError{Err: "i/o timeout", Name: "api.github.com", IsTimeout: true}, 4, "i/o timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dials atomic.Int64
			transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return nil, &net.OpError{Op: "dial", Net: network, Err: tc.dnsErr}
			}}
			c, err := github.New(github.Options{
				BaseURL: "https://api.gihtub.com/", Token: testToken, Repo: testRepo, CacheDir: t.TempDir(),
				Retry:      github.RetryPolicy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond},
				HTTPClient: &http.Client{Transport: transport},
			})
			require.NoError(t, err)
			_, err = c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
			require.ErrorContains(t, err, tc.wantErr)
			require.Equal(t, tc.wantDials, dials.Load(), "tries")
		})
	}
}
