// Package invalidate asks the dashboard to drop its cached responses once
// an ingest committed: a POST to the site's invalidation endpoint
// (/api/v1/invalidate) with a bearer token, retried. A redirect is never
// followed: the token goes to the configured URL only, and a POST turned
// into a GET elsewhere cannot pass for an invalidation. A failure is the
// caller's warning; it never touches the data.
package invalidate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Client posts invalidations to one URL.
type Client struct {
	URL   string
	Token string
	// Attempts is how many times the POST is tried (at least 1).
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// later one; a Retry-After the site sends (seconds) wins, up to
	// maxRetryAfter.
	Backoff time.Duration
	HTTP    *http.Client
}

// Result is how the invalidation went.
type Result struct {
	Attempts int
	// Status is the last HTTP status received (0: none).
	Status int
}

// maxRetryAfter bounds a Retry-After the site asks for.
const maxRetryAfter = 30 * time.Second

// permanent is a refusal retrying cannot change (a 4xx other than 408 and
// 429: a wrong token, an unknown scope).
// A redirect is one too, naming where it pointed (location).
type permanent struct {
	status   int
	location string
}

func (p permanent) Error() string {
	if p.location != "" {
		return fmt.Sprintf("redirected with HTTP %d to %s, not followed (the token goes to the configured URL only)", p.status, p.location)
	}
	return fmt.Sprintf("refused with HTTP %d", p.status)
}

// Post sends the invalidation, retrying network errors, timeouts, 408,
// 429 and 5xx until it succeeds (2xx) or the attempts are spent
// (backoff.Retry). Cancelled while it waits, it returns the last failure
// and the cancellation's cause.
func (c Client) Post(ctx context.Context) (Result, error) {
	attempts := max(c.Attempts, 1)
	client := &http.Client{Timeout: 30 * time.Second}
	if c.HTTP != nil {
		copied := *c.HTTP
		client = &copied
	}
	// The redirect response itself is the answer: Do neither follows it nor
	// sends the Authorization header anywhere else.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var (
		res  Result
		last error
	)
	try := func() (struct{}, error) {
		res.Attempts++
		status, retryAfter, err := c.once(ctx, client)
		res.Status, last = status, err
		switch {
		case err == nil:
			return struct{}{}, nil
		case errors.As(err, new(permanent)):
			return struct{}{}, backoff.Permanent(err)
		case retryAfter > 0:
			return struct{}{}, fmt.Errorf("%w, %w", err, &backoff.RetryAfterError{Duration: min(retryAfter, maxRetryAfter)})
		}
		return struct{}{}, err
	}
	// Backoff before the second attempt, doubled before each later one
	// (no jitter: one POST per ingest, nothing to spread).
	wait := &backoff.ExponentialBackOff{InitialInterval: c.Backoff, Multiplier: 2, MaxInterval: time.Duration(math.MaxInt64)}
	_, err := backoff.Retry(ctx, try, backoff.WithBackOff(wait), backoff.WithMaxTries(uint(attempts)), backoff.WithMaxElapsedTime(0))
	if err != nil && last != nil && ctx.Err() != nil && err == context.Cause(ctx) {
		return res, fmt.Errorf("%w (then %w)", last, err)
	}
	return res, err
}

func (c Client) once(ctx context.Context, client *http.Client) (status int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("User-Agent", "ingest")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return s, 0, nil
	case s >= 300 && s < 400:
		return s, 0, permanent{status: s, location: redirectTarget(resp)}
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			retryAfter = time.Duration(secs) * time.Second
		}
		return s, retryAfter, fmt.Errorf("HTTP %d", s)
	default:
		return s, 0, permanent{status: s}
	}
}

// redirectTarget is the Location of a redirect, resolved against the
// request, without its user information, query or fragment (where a
// signed URL keeps its credential).
func redirectTarget(resp *http.Response) string {
	u, err := resp.Location()
	if err != nil {
		return "(no usable Location)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
