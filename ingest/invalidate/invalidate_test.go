package invalidate_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
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
