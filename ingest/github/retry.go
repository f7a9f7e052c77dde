package github

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	gogithub "github.com/google/go-github/v66/github"
	"go.uber.org/zap"
)

// RetryPolicy says how often and how long a request is tried again.
type RetryPolicy struct {
	// Attempts is the number of tries of one request when it fails
	// transiently (5xx, timeout, dropped connection, short or corrupt
	// download); default 6.
	Attempts int
	// BaseDelay is the first backoff (default 1 s); it doubles per try up
	// to MaxDelay (default 30 s), and the actual sleep is drawn uniformly
	// from [delay/2, 3·delay/2] (jitter; backoff.ExponentialBackOff).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// RateLimitWaits is how many rate-limit waits one request accepts
	// (default 10), and MaxWait the longest single wait (default 15 min):
	// beyond either the request fails, saying when the limit resets.
	RateLimitWaits int
	MaxWait        time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = 6
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.RateLimitWaits <= 0 {
		p.RateLimitWaits = 10
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 15 * time.Minute
	}
	return p
}

// verdict is what to do about a failed request.
type verdict int

const (
	permanent verdict = iota
	transient
	rateLimited
)

// failure is a classified error: what to do, and for a rate limit how
// long to wait and which limit it is.
type failure struct {
	verdict verdict
	wait    time.Duration
	limit   string // "primary" or "secondary"
}

// secondaryDefaultWait is GitHub's advice when a secondary limit answer
// carries no Retry-After: wait at least a minute.
const secondaryDefaultWait = time.Minute

// classify decides whether a request that ended with resp (possibly nil)
// and err is tried again. now is the current time (rate-limit resets are
// absolute).
func classify(resp *http.Response, err error, now time.Time) failure {
	var rl *gogithub.RateLimitError
	if errors.As(err, &rl) {
		return failure{verdict: rateLimited, wait: untilReset(rl.Rate.Reset.Time, now), limit: "primary"}
	}
	var ab *gogithub.AbuseRateLimitError
	if errors.As(err, &ab) {
		w := secondaryDefaultWait
		if ab.RetryAfter != nil {
			w = *ab.RetryAfter
		}
		return failure{verdict: rateLimited, wait: w, limit: "secondary"}
	}
	if resp != nil {
		code := resp.StatusCode
		switch {
		case code == http.StatusTooManyRequests || code == http.StatusForbidden:
			if ra := resp.Header.Get("Retry-After"); ra != "" {
				if secs, perr := strconv.Atoi(strings.TrimSpace(ra)); perr == nil && secs >= 0 {
					return failure{verdict: rateLimited, wait: time.Duration(secs) * time.Second, limit: "secondary"}
				}
			}
			if resp.Header.Get("X-RateLimit-Remaining") == "0" {
				if reset, perr := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); perr == nil {
					return failure{verdict: rateLimited, wait: untilReset(time.Unix(reset, 0), now), limit: "primary"}
				}
			}
			if code == http.StatusTooManyRequests {
				return failure{verdict: rateLimited, wait: secondaryDefaultWait, limit: "secondary"}
			}
			return failure{verdict: permanent}
		case code >= 500:
			return failure{verdict: transient}
		case code >= 400:
			return failure{verdict: permanent}
		}
	}
	if err == nil {
		return failure{verdict: permanent}
	}
	if isTransientNetError(err) {
		return failure{verdict: transient}
	}
	return failure{verdict: permanent}
}

// untilReset is the wait until a primary limit resets, plus a second of
// slack for clock skew.
func untilReset(reset, now time.Time) time.Duration {
	w := reset.Sub(now) + time.Second
	if w < time.Second {
		w = time.Second
	}
	return w
}

// errCorruptDownload marks a download whose size or digest is not the
// listed one: the bytes are fetched again.
var errCorruptDownload = errors.New("corrupt download")

// isTransientNetError reports errors worth another try: timeouts, dropped
// or refused connections, truncated bodies, corrupt downloads. A host
// name that does not resolve ("no such host") and a certificate that does
// not verify are not: another try would give the same answer.
func isTransientNetError(err error) bool {
	if permanentNetError(err) {
		return false
	}
	if errors.Is(err, errCorruptDownload) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, errStalled) || errors.Is(err, errTooSlow) ||
		errors.Is(err, errBlobForbidden) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// permanentNetError reports network errors that no retry changes: a name
// the resolver says does not exist, and TLS certificate failures.
func permanentNetError(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}

// attemptFunc is one try of a request. It returns the HTTP response it
// got (its body already consumed or closed; nil when none) and an error.
type attemptFunc func(ctx context.Context) (*http.Response, error)

// rateLimitWait is a rate-limit answer: the request is tried again after
// the wait the API asked for (backoff's RetryAfterError), which is not a
// failed try.
type rateLimitWait struct {
	err   error
	limit string
	wait  backoff.RetryAfterError
}

func (w *rateLimitWait) Error() string { return w.err.Error() }
func (w *rateLimitWait) Unwrap() []error {
	return []error{w.err, &w.wait}
}

// do runs fn until it succeeds, fails permanently, or the policy is spent;
// backoff.Retry (github.com/cenkalti/backoff/v5, the retry loop of this
// package and of ingest/invalidate; 25 KB of the binary) sleeps between
// the tries. timeout bounds each try (0: no
// bound). what names the request in logs and errors.
func (c *Client) do(ctx context.Context, what string, timeout time.Duration, fn attemptFunc) error {
	p := c.opts.Retry
	tries, waits := 0, 0
	try := func() (struct{}, error) {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		resp, err := fn(actx)
		cancel()
		if err == nil {
			return struct{}{}, nil
		}
		if ctx.Err() != nil {
			return struct{}{}, backoff.Permanent(context.Cause(ctx))
		}
		f := classify(resp, err, time.Now())
		switch f.verdict {
		case rateLimited:
			waits++
			if waits > p.RateLimitWaits {
				return struct{}{}, backoff.Permanent(fmt.Errorf("still rate limited after %d waits: %w", p.RateLimitWaits, err))
			}
			if f.wait > p.MaxWait {
				return struct{}{}, backoff.Permanent(fmt.Errorf("%s rate limit: the API asks to wait %s, longer than the %s accepted: %w",
					f.limit, f.wait.Round(time.Second), p.MaxWait, err))
			}
			return struct{}{}, &rateLimitWait{err: err, limit: f.limit, wait: backoff.RetryAfterError{Duration: f.wait}}
		case transient:
			tries++
			if tries >= p.Attempts {
				return struct{}{}, backoff.Permanent(fmt.Errorf("gave up after %d attempts: %w", tries, err))
			}
			return struct{}{}, err
		default:
			return struct{}{}, backoff.Permanent(err)
		}
	}
	notify := func(err error, d time.Duration) {
		if rl, ok := errors.AsType[*rateLimitWait](err); ok {
			c.log.Warn("rate limited: waiting", zap.String("request", what), zap.String("limit", rl.limit), zap.Duration("wait", d))
			return
		}
		c.log.Warn("request failed: retrying", zap.String("request", what), zap.Int("attempt", tries),
			zap.Duration("backoff", d), zap.String("error", err.Error()))
	}
	_, err := backoff.Retry(ctx, try, backoff.WithBackOff(p.exponential()), backoff.WithNotify(notify),
		backoff.WithMaxElapsedTime(0)) // bounded by Attempts, RateLimitWaits and MaxWait instead
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// exponential is the policy's backoff between transient failures.
func (p RetryPolicy) exponential() *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{InitialInterval: p.BaseDelay, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: p.MaxDelay}
}

// ghResponse unwraps go-github's response.
func ghResponse(r *gogithub.Response) *http.Response {
	if r == nil {
		return nil
	}
	return r.Response
}

// IsAuthError reports whether err is the API refusing the token (401):
// every further request would fail the same way.
func IsAuthError(err error) bool {
	var er *gogithub.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnauthorized
}
