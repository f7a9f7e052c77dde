package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/invalidate"
	"github.com/inferencex/ingest/schema"
)

// invalidateOpts configure the dashboard cache invalidation after a
// committed ingest. The token comes from INGEST_INVALIDATE_TOKEN only.
type invalidateOpts struct {
	url      *setting
	attempts *setting
	backoff  *setting
	client   *invalidate.Client
}

func addInvalidate(s *settings) *invalidateOpts {
	return &invalidateOpts{
		url: s.str("invalidate-url", "", "after a committed ingest, POST here to drop the dashboard's cache (the site's /api/v1/invalidate); "+
			"bearer token from INGEST_INVALIDATE_TOKEN", "INGEST_INVALIDATE_URL"),
		attempts: s.intIn("invalidate-attempts", "4", 1, 10, "attempts of the invalidation POST", "INGEST_INVALIDATE_ATTEMPTS"),
		backoff: s.duration("invalidate-backoff", "2s", "wait before the second attempt, doubled before each later one", func(d time.Duration) error {
			if d < 0 || d > time.Minute {
				return errors.New("want a duration from 0 to 1m")
			}
			return nil
		}, "INGEST_INVALIDATE_BACKOFF"),
	}
}

// check validates the options before anything is read: a URL needs a
// token, attempts from 1 to 10, a backoff of at most a minute.
func (o *invalidateOpts) check(getenv func(string) string) error {
	o.client = nil
	raw := o.url.String()
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%s: not an http(s) URL", o.url.label())
	}
	token := getenv("INGEST_INVALIDATE_TOKEN")
	if token == "" {
		return fmt.Errorf("%s is set but INGEST_INVALIDATE_TOKEN is not: the site refuses an invalidation without its token", o.url.label())
	}
	o.client = &invalidate.Client{URL: raw, Token: token, Attempts: int(o.attempts.int64()), Backoff: o.backoff.duration()}
	return nil
}

// after invalidates the dashboard's cache once an ingest committed
// something (not a dry run, an abort or a rerun answered from the ledger).
// A failure is a warning: the data stays committed and the exit code is
// the ingest's.
func (o *invalidateOpts) after(ctx context.Context, env Env, sum *schema.Summary, log *zap.Logger) {
	if o.client == nil || sum == nil || sum.DryRun || sum.Status == schema.StatusAborted || sum.Details.UnchangedSince != 0 {
		return
	}
	where := github.RedactURLText(o.client.URL)
	res, err := o.client.Post(ctx)
	if err == nil {
		fmt.Fprintf(env.Stderr, "ingest: dashboard cache invalidated (POST %s: HTTP %d, attempt %d)\n", where, res.Status, res.Attempts)
		return
	}
	reason := fmt.Sprintf("dashboard cache invalidation failed after %d attempts (POST %s): %s; the data is committed, "+
		"the dashboard serves its cache until it expires or the invalidation is sent again", res.Attempts, where, github.RedactURLText(err.Error()))
	log.Warn("cache invalidation failed", zap.String("reason", reason))
	fmt.Fprintln(env.Stderr, "ingest: warning: "+reason)
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		fmt.Fprintf(env.Stderr, "::warning title=%s::%s\n", escapeProperty("Cache invalidation failed"), escapeData(reason))
	}
}
