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
	// Oversize serves the blob, then keeps streaming zeros (chunked, no
	// Content-Length) until the client hangs up: more than the listing's
	// size_in_bytes, without end.
	Oversize
	// SlowLoris serves the blob one byte every Interval, each byte in
	// time to reset any stall timer.
	SlowLoris
	// NoLink serves an artifact listing page without its Link header,
	// as if GitHub had dropped it: only total_count says more pages exist.
	NoLink
	// DriftAfterPage serves an artifact listing page, then deletes the
	// artifact named Artifact, so that the next page shifts by one.
	DriftAfterPage
)

// Fault is injected into the responses of a route.
type Fault struct {
	Route Route
	// Artifact limits a download or blob fault to one artifact name; a
	// DriftAfterPage fault deletes the artifact of this name.
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
	// Interval is the pause between the bytes of a SlowLoris blob
	// (default 1 s).
	Interval time.Duration
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
		// A drift's Artifact is the one it deletes, not a filter.
		filtered := f.Artifact != "" && f.Artifact != artifact && f.Kind != DriftAfterPage
		if f.Route != route || filtered || (f.Times > 0 && f.hits >= f.Times) {
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
	case Oversize:
		if body == nil {
			return false
		}
		w.Header().Set("Content-Type", "application/zip")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		zeros := make([]byte, 32<<10)
		// Bounded only so that a broken client cannot keep a test
		// running: 4 GiB is far past any listed size.
		for sent := 0; sent < 4<<30; sent += len(zeros) {
			if _, err := w.Write(zeros); err != nil || r.Context().Err() != nil {
				break
			}
		}
	case SlowLoris:
		if body == nil {
			return false
		}
		every := f.Interval
		if every <= 0 {
			every = time.Second
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for i := range body {
			if _, err := w.Write(body[i : i+1]); err != nil {
				break
			}
			if fl != nil {
				fl.Flush()
			}
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(every):
			}
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
