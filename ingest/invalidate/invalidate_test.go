package invalidate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/invalidate"
)

// site answers each POST with the next status of script (the last one
// repeats) and records the Authorization headers it saw.
type site struct {
	mu     sync.Mutex
	script []int
	auth   []string
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	status := s.script[min(len(s.auth), len(s.script))-1]
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"invalidated":true}`))
}

func TestPost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		script   []int
		attempts int
		ok       bool
		calls    int
		status   int
	}{
		{"first try", []int{200}, 3, true, 1, 200},
		{"two 503 then 200", []int{503, 503, 200}, 3, true, 3, 200},
		{"429 with Retry-After then 200", []int{429, 200}, 3, true, 2, 200},
		{"always 500: attempts spent", []int{500}, 3, false, 3, 500},
		{"401 is not retried", []int{401, 200}, 3, false, 1, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &site{script: tc.script}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c := invalidate.Client{URL: srv.URL + "/api/v1/invalidate", Token: "tok", Attempts: tc.attempts, Backoff: time.Millisecond}
			res, err := c.Post(t.Context())
			require.Equal(t, tc.ok, err == nil, "%v", err)
			require.Equal(t, tc.calls, res.Attempts)
			require.Equal(t, tc.status, res.Status)
			require.Len(t, s.auth, tc.calls)
			for _, a := range s.auth {
				require.Equal(t, "Bearer tok", a)
			}
		})
	}
}

func TestPostUnreachable(t *testing.T) {
	t.Parallel()
	c := invalidate.Client{URL: "http://127.0.0.1:1/api/v1/invalidate", Token: "tok", Attempts: 2, Backoff: time.Millisecond}
	res, err := c.Post(t.Context())
	require.Error(t, err)
	require.Equal(t, 2, res.Attempts)
	require.Zero(t, res.Status)
}

// elsewhere is a server a redirect points to: it answers anything 200 and
// records the requests it saw (method and Authorization).
type elsewhere struct {
	mu   sync.Mutex
	seen []string
}

func (e *elsewhere) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, r.Method+" "+r.Header.Get("Authorization"))
	w.WriteHeader(http.StatusOK)
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// TestPostRedirectNotFollowed: a redirect — a 302 to another host, which
// would turn the POST into a GET answered 200, or a 307 to another port
// of the same host, which would carry the token there — is a failure
// naming its target without the query, not retried, and the target never
// hears from the client.
func TestPostRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	target := &elsewhere{}
	other := httptest.NewServer(target)
	defer other.Close()
	otherHost := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another host, same machine
	for _, tc := range []struct {
		name     string
		status   int
		location string
	}{
		{"302 to another host", http.StatusFound, otherHost + "/api/v1/invalidate"},
		{"307 to another port", http.StatusTemporaryRedirect, other.URL + "/api/v1/invalidate"},
		{"308 on the same origin", http.StatusPermanentRedirect, "/api/v2/invalidate"},
	} {
		t.Run(tc.name, func(t *testing.T) { // not parallel: other serves them all
			var posts atomic.Int32
			site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/invalidate" {
					w.WriteHeader(http.StatusOK) // a same-origin target that would answer
					return
				}
				posts.Add(1)
				w.Header().Set("Location", tc.location+"?sig=leaked-sig-31")
				w.WriteHeader(tc.status)
			}))
			defer site.Close()
			c := invalidate.Client{URL: site.URL + "/api/v1/invalidate", Token: "tok-5521", Attempts: 3, Backoff: time.Millisecond}
			res, err := c.Post(t.Context())
			require.Error(t, err)
			want := tc.location
			if strings.HasPrefix(want, "/") {
				want = site.URL + want
			}
			require.ErrorContains(t, err, fmt.Sprintf("redirected with HTTP %d to %s, not followed", tc.status, want))
			require.NotContains(t, err.Error(), "leaked-sig-31")
			require.Equal(t, 1, res.Attempts, "a redirect is retried")
			require.Equal(t, tc.status, res.Status)
			require.Equal(t, int32(1), posts.Load())
		})
	}
	require.Empty(t, target.requests(), "the redirect target was reached")
}

// signalling is a transport that says when a response came back.
type signalling struct{ answered chan<- struct{} }

func (s signalling) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	s.answered <- struct{}{}
	return resp, err
}

// TestPostCancelledWhileWaiting: cancelled once the first attempt was
// answered 503, Post tries no more and returns an error naming the
// failure and the cancellation's cause.
func TestPostCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&site{script: []int{http.StatusServiceUnavailable}})
	defer srv.Close()
	answered := make(chan struct{}, 1)
	ctx, cancel := context.WithCancelCause(t.Context())
	stopped := errors.New("SIGTERM")
	go func() {
		<-answered
		cancel(stopped)
	}()
	c := invalidate.Client{URL: srv.URL + "/api/v1/invalidate", Token: "tok", Attempts: 3, Backoff: time.Hour,
		HTTP: &http.Client{Transport: signalling{answered}}}
	res, err := c.Post(ctx)
	require.ErrorIs(t, err, stopped)
	require.ErrorContains(t, err, "HTTP 503")
	require.Equal(t, 1, res.Attempts)
	require.Equal(t, http.StatusServiceUnavailable, res.Status)
}
