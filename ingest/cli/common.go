package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// DefaultDatabaseURL is where the tool writes when nothing else is said: the
// local server, without TLS (on loopback it only costs CPU).
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/ingest?sslmode=disable"

// commonOpts are the options every database command shares.
type commonOpts struct {
	dbURL            *setting
	logLevel         *setting
	logFormat        *setting
	lockTimeout      *setting
	statementTimeout *setting
	// noMigrate is --no-migrate for a command that writes (addNoMigrate);
	// a command that only reads never migrates.
	noMigrate   *bool
	targetName  *setting
	targetsFile *setting
	// store is what check resolved the timeouts to.
	store store.Options
	// target is what check resolved --target to; dbURL then holds its URL.
	target target
	// getenv reads the environment (the targets' URLs).
	getenv func(string) string
	// server is what the target's server said it is (checkServer).
	server *schema.ServerIdentity
}

// logLevels are the levels --log-level takes.
var logLevels = []string{"debug", "info", "warn", "error"}

func addCommon(s *settings) *commonOpts {
	return &commonOpts{
		dbURL:     s.str("database-url", DefaultDatabaseURL, "PostgreSQL connection string", "DATABASE_WRITE_URL", "DATABASE_URL"),
		logLevel:  s.enum("log-level", "info", logLevels, "log level (warn on a terminal outside CI unless set)", "INGEST_LOG_LEVEL"),
		logFormat: s.enum("log-format", "", []string{"console", "json"}, "log format (default json when CI is set, else console)", "INGEST_LOG_FORMAT"),
		lockTimeout: s.timeout("lock-timeout", store.FormatDuration(store.DefaultLockTimeout),
			"longest wait for a lock, the run's advisory lock included (0: no limit)", "INGEST_LOCK_TIMEOUT"),
		statementTimeout: s.timeout("statement-timeout", store.FormatDuration(store.DefaultStatementTimeout),
			"longest run of one SQL statement (0: no limit)", "INGEST_STATEMENT_TIMEOUT"),
		noMigrate:   new(bool),
		targetName:  s.str("target", ProductionTarget, "the database to use: production, or a target configured by DATABASE_WRITE_URL_<TARGET> or the targets file", "INGEST_TARGET"),
		targetsFile: s.str("targets-file", "", "JSON file naming targets and where their URLs come from", "INGEST_TARGETS_FILE"),
		getenv:      s.env,
	}
}

// addNoMigrate declares --no-migrate, for the commands that write.
func (c *commonOpts) addNoMigrate(s *settings) {
	c.noMigrate = s.flag("no-migrate", "do not apply pending migrations first", "INGEST_NO_MIGRATE")
}

// check validates the options every database command shares, before
// anything connects: an error is a usage error (exit 2).
func (c *commonOpts) check() error {
	t, err := resolveTarget(c.targetName.String(), c.dbURL, c.targetsFile.String(), c.getenv)
	if err != nil {
		return err
	}
	if t.fallback && inCI(c.getenv) {
		// A missing secret (a fork's pull request gets none) reads as an
		// empty variable: in CI that must not quietly mean a local server.
		return errors.New("no database URL: DATABASE_WRITE_URL and DATABASE_URL are empty or unset, and in CI " +
			"(CI or GITHUB_ACTIONS set) the local default is not assumed: set DATABASE_WRITE_URL (or --database-url)")
	}
	c.target, c.dbURL.value = t, t.url
	c.store.LockTimeout = c.lockTimeout.duration()
	c.store.StatementTimeout = c.statementTimeout.duration()
	return nil
}

// newLogger checks the common options, then builds the one logger of the
// process: JSON lines in CI, readable console lines on a terminal, always on
// stderr. An error is a usage error.
func newLogger(c *commonOpts, env Env) (*zap.Logger, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var level zapcore.Level
	if err := level.Set(c.logLevel.String()); err != nil {
		return nil, fmt.Errorf("%s: %w", c.logLevel.label(), err)
	}
	if quietByDefault(c.logLevel, env.Getenv, isTerminal(env.Stderr)) {
		level = zapcore.WarnLevel
	}
	format := c.logFormat.String()
	if format == "" {
		format = "console"
		if inCI(env.Getenv) {
			format = "json"
		}
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		// Durations with their unit ("took": "2.4ms"); JSON keeps seconds
		// as numbers, which the bench command and log pipelines read.
		encCfg.EncodeDuration = zapcore.StringDurationEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, fmt.Errorf("%s: %q is not console or json", c.logFormat.label(), format)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(env.Stderr), level)), nil
}

// quietByDefault reports whether the log level defaults to warn: on a
// terminal outside CI the progress line and the report are the display, so
// info lines are kept for when a level is asked for (flag or environment).
// In CI, or when stderr is not a terminal, the default stays info.
func quietByDefault(level *setting, getenv func(string) string, terminal bool) bool {
	if level.given || level.from != "" || !terminal {
		return false
	}
	return !inCI(getenv)
}

// inCI reports whether the process runs in CI: CI or GITHUB_ACTIONS set.
func inCI(getenv func(string) string) bool {
	return getenv("CI") != "" || getenv("GITHUB_ACTIONS") != ""
}

// connect builds the logger and opens the store for a command that only
// reads or manages the schema (no migration first). It returns an exit code
// when it could not, and refuses a database whose schema this program
// does not own (store.ErrForeignSchema) with what it found.
func connect(ctx context.Context, c *commonOpts, env Env) (*store.Store, *zap.Logger, int) {
	log, err := newLogger(c, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return nil, nil, ExitUsage
	}
	*c.noMigrate = true
	st, err := openStore(ctx, c, log, false)
	if err != nil {
		return nil, nil, failOpen(env, err)
	}
	if err := st.CheckOwned(ctx); err != nil {
		st.Close()
		return nil, nil, failOpen(env, err)
	}
	return st, log, ExitOK
}

// connectSchema is connect for a command that reads our tables: an empty
// database (nothing migrated it) is refused, saying how to fix it, before
// the first query fails on a missing table.
func connectSchema(ctx context.Context, c *commonOpts, env Env) (*store.Store, *zap.Logger, int) {
	st, log, code := connect(ctx, c, env)
	if code != ExitOK {
		return nil, nil, code
	}
	if err := st.CheckSchema(ctx); err != nil {
		st.Close()
		return nil, nil, failOpen(env, err)
	}
	return st, log, ExitOK
}

// openStore connects, proves a target other than production is another
// database (checkServer) and, unless told not to, applies pending
// migrations.
// For a command that writes, it then refuses a database this binary must
// not write to — one whose schema it does not own, dirty, or newer than
// the binary — whether or not it migrated (store.Store.CheckWritable).
func openStore(ctx context.Context, c *commonOpts, log *zap.Logger, write bool) (*store.Store, error) {
	st, err := store.OpenWith(ctx, c.dbURL.String(), c.store, log)
	if err != nil {
		return nil, err
	}
	if err := checkServer(ctx, c, st, log); err != nil {
		st.Close()
		return nil, err
	}
	if !*c.noMigrate {
		if _, _, err := st.MigrateUp(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	if write {
		if err := st.CheckWritable(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	return st, nil
}

// readFiles opens each comma-separated path for a loader of data files.
func readFiles(list string) ([]io.Reader, func(), error) {
	var readers []io.Reader
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		readers = append(readers, f)
	}
	return readers, closeAll, nil
}

// failOpen reports why the database could not be opened for a command. A
// target that is production's database, one whose schema this program does
// not own, or one not migrated to the newest schema (a write with
// --no-migrate) is refused as a usage error (ExitUsage): the command names
// the wrong database, or one to adopt or migrate first; nothing was
// written to it.
func failOpen(env Env, err error) int {
	var same *sameDatabaseError
	if errors.As(err, &same) {
		fmt.Fprintln(env.Stderr, "ingest:", same)
		return ExitUsage
	}
	code := fail(env, "%v", err)
	if errors.Is(err, store.ErrForeignSchema) || errors.Is(err, store.ErrNoSchema) || errors.Is(err, store.ErrNotMigrated) {
		return ExitUsage
	}
	return code
}

// readOverrideFiles reads the comma-separated run-override files whole
// (they are small), each named by its path for the ledger's errors.
func readOverrideFiles(list string) ([]overrides.Extension, error) {
	var exts []overrides.Extension
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		exts = append(exts, overrides.Extension{Name: p, Data: b})
	}
	return exts, nil
}

// fail prints why a command stops, credentials in URLs redacted, and
// returns ExitAborted. In GitHub Actions the reason is also an ::error::
// annotation (on stderr, like every workflow command: stdout may carry
// JSON) and a short job summary: nothing else reports it there.
func fail(env Env, format string, args ...any) int {
	reason := github.RedactURLText(fmt.Sprintf(format, args...))
	fmt.Fprintln(env.Stderr, "ingest: "+reason)
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		fmt.Fprintf(env.Stderr, "::error title=%s::%s\n", escapeProperty("Ingest aborted"), escapeData(reason))
		if p := env.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
			appendStepSummary(p, report.AbortNote(reason))
		}
	}
	return ExitAborted
}

// appendStepSummary appends text to the job summary file; a summary that
// cannot be written is not worth failing for.
func appendStepSummary(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text+"\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isTerminal reports whether a stream is a terminal (progress is drawn on
// one; elsewhere it is logged; a destructive action asks on one).
func isTerminal(stream any) bool {
	if _, ok := stream.(*liveStderr); ok {
		return true
	}
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
