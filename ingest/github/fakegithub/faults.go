package fakegithub

import (
	"net/http"
	"strconv"
	"time"
)

// FaultKind is what an injected fault does.
type FaultKind int

// Fault kinds.
const (
	// Status answers Fault.Status with a JSON message.
	Status FaultKind = iota
	// TooManyRequests answers 429 with Retry-After.
	TooManyRequests
	// SecondaryRateLimit answers 403 "You have exceeded a secondary rate
	// limit" with Retry-After.
	SecondaryRateLimit
	// PrimaryRateLimit answers 403 with X-RateLimit-Remaining: 0 and
	// X-RateLimit-Reset RetryAfter seconds ahead.
	PrimaryRateLimit
	// CutConnection closes the connection: on blob storage after sending
	// half the body (Content-Length promising all of it), elsewhere before
	// any response.
	CutConnection
	// Hang never answers; the client must time out.
	Hang
	// Corrupt serves the blob with one byte changed.
	Corrupt
	// ServeThenFail performs an API request (a create lands) but answers
	// 502, as when a response is lost on the way back.
	ServeThenFail
	// RacingComment adds a comment with body Message to the issue just
	// before serving a create, as a concurrent poster would.
	RacingComment
)

// Fault is injected into the responses of a route.
type Fault struct {
	Route Route
	// Artifact limits a download or blob fault to one artifact name.
	Artifact string
	// Times is how many matching requests it hits (0: all of them).
	Times int
	Kind  FaultKind
	// Status is the code of a Status fault.
	Status int
	// Message is the JSON message of a Status fault.
	Message string
	// RetryAfter is the wait the rate-limit faults ask for, in seconds
	// (default 1).
	RetryAfter int
}

type faultState struct {
	Fault
	hits int
}

// Inject adds a fault; faults are matched in the order injected.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultState{Fault: f})
}

// Hits is how often the faults of a route struck.
func (s *Server) Hits(r Route) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faults {
		if f.Route == r {
			n += f.hits
		}
	}
	return n
}

// fault returns the fault that strikes this request, if any.
func (s *Server) fault(route Route, artifact string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.Route != route || (f.Artifact != "" && f.Artifact != artifact) || (f.Times > 0 && f.hits >= f.Times) {
			continue
		}
		f.hits++
		c := f.Fault
		return &c
	}
	return nil
}

// applyFault answers a request with fault f; body is the blob being
// served, if any. It returns false when the request should be served
// normally after all (a Corrupt fault does its own serving).
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f *Fault, body []byte) bool {
	wait := f.RetryAfter
	if wait <= 0 {
		wait = 1
	}
	switch f.Kind {
	case Status:
		msg := f.Message
		if msg == "" {
			msg = http.StatusText(f.Status)
		}
		writeError(w, f.Status, msg)
	case TooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		writeError(w, http.StatusTooManyRequests, "Too Many Requests")
	case SecondaryRateLimit:
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		writeError(w, http.StatusForbidden, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
	case PrimaryRateLimit:
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Used", "5000")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Duration(wait)*time.Second).Unix(), 10))
		w.Header().Set("X-RateLimit-Resource", "core")
		writeError(w, http.StatusForbidden, "API rate limit exceeded for installation.")
	case CutConnection:
		if body != nil {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			w.Write(body[:len(body)/2])
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	case Hang:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	case Corrupt:
		if body == nil {
			return false
		}
		bad := append([]byte(nil), body...)
		bad[len(bad)/2] ^= 0xff
		w.Header().Set("Content-Length", strconv.Itoa(len(bad)))
		w.Write(bad)
	}
	return true
}
