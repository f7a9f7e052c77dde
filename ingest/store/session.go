package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ApplicationName is the application_name of every connection the tool
// opens, so pg_stat_activity (and a waiting ingest's log) can tell its
// sessions apart.
const ApplicationName = "ingest"

// The default timeouts suit a CI job: long enough for the largest run on a
// busy server, short enough that a stuck ingest fails the job within the
// hour instead of hanging until the runner's limit.
const (
	DefaultLockTimeout      = 10 * time.Minute
	DefaultStatementTimeout = 30 * time.Minute
)

// Options are the session settings of every connection the store opens.
type Options struct {
	// LockTimeout bounds every wait for a lock, the run's advisory lock
	// included (0: no limit).
	LockTimeout time.Duration
	// StatementTimeout bounds every statement (0: no limit).
	StatementTimeout time.Duration
	// Jobs is how many backfill runs the process works on at once (0:
	// one): the pool allows three connections for each.
	Jobs int
}

// DefaultOptions are the options of Open.
func DefaultOptions() Options {
	return Options{LockTimeout: DefaultLockTimeout, StatementTimeout: DefaultStatementTimeout}
}

// CheckTimeout validates a timeout as PostgreSQL takes it: 0 (no limit) or
// a whole number of milliseconds from 1 ms to about 24 days.
func CheckTimeout(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("%s is negative", FormatDuration(d))
	case d > 0 && d < time.Millisecond:
		return fmt.Errorf("%s is less than 1ms (0 means no limit)", d)
	case d.Milliseconds() > 1<<31-1:
		return fmt.Errorf("%s is more than PostgreSQL's limit of %s", FormatDuration(d), FormatDuration(time.Duration(1<<31-1)*time.Millisecond))
	}
	return nil
}

// CheckURL reports whether Open can parse a connection string (its pool
// settings included); the error never echoes the string, which may hold a
// password.
func CheckURL(url string) error {
	// A URL of another database (mysql://, sqlite://) would otherwise be
	// "cannot parse the connection string"; keyword=value strings have
	// no scheme and go to the parser.
	if scheme, _, ok := strings.Cut(url, "://"); ok && isScheme(scheme) {
		if s := strings.ToLower(scheme); s != "postgres" && s != "postgresql" {
			return fmt.Errorf("wants a PostgreSQL URL (postgres://…), not %q", scheme)
		}
	}
	if _, err := pgxpool.ParseConfig(url); err != nil {
		return redact(err)
	}
	return nil
}

// setSession puts the session settings into a connection's startup
// parameters: they hold from the first statement, on every connection of
// the pool and of the migrations.
func (o Options) setSession(params map[string]string) {
	params["application_name"] = ApplicationName
	params["lock_timeout"] = millis(o.LockTimeout)
	params["statement_timeout"] = millis(o.StatementTimeout)
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// FormatDuration writes a duration the way a user gives one: 2s, 10m,
// 1h30m, 1.5s (not 10m0s).
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// explain turns a timeout of the statement named what into an error that
// says which limit struck where: "statement timeout after 30m in write
// benchmark results". Other errors are wrapped with the name.
func (o Options) explain(what string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout"): // query_canceled
			return &TimeoutError{Kind: "statement timeout", After: o.StatementTimeout, In: what, Err: err}
		case pgErr.Code == "55P03": // lock_not_available
			return &TimeoutError{Kind: "lock timeout", After: o.LockTimeout, In: what, Err: err}
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// TimeoutError is a statement that ran out of its statement or lock
// timeout.
type TimeoutError struct {
	Kind  string // "statement timeout" or "lock timeout"
	After time.Duration
	// In names the statement (or the lock) the ingest was waiting on.
	In  string
	Err error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s after %s in %s", e.Kind, FormatDuration(e.After), e.In)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// DatabaseName is the database a connection string names ("" when it does
// not parse).
func DatabaseName(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return ""
	}
	return cfg.ConnConfig.Database
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-', '.'), so quoting it cannot echo a password.
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}
