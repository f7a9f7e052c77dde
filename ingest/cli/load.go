package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/buildid"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// ingestOpts are the options of the commands that ingest a tree.
type ingestOpts struct {
	*commonOpts
	dryRun      *bool
	reread      *bool
	format      *setting
	summaryJSON *setting
	unmappedOut *setting
	catalog     *setting
	overrides   *setting
	repo        *setting
	runID       *setting
	attempt     *setting
	runDate     *setting
	runStarted  *setting
	runName     *setting
	headSHA     *setting
	headBranch  *setting
	runURL      *setting
	// githubAPI is --base-url where the command declares it (run); else
	// the GitHub API is GITHUB_API_URL, else api.github.com.
	githubAPI  *setting
	conclusion *setting
	event      *setting
	coverage   coverageOpts
	publish    *publishOpts
	invalidate *invalidateOpts
	// outputFailed is set when an output file could not be written after
	// the ingest (its exit code is then 3, which demo must not read as
	// its designed failures).
	outputFailed bool
}

// reportFormats are the formats of a run's report: INGEST_REPORT_FORMAT
// (--format) means this one thing for every command that prints the
// report (load, run, demo, supplemental, report).
var reportFormats = []string{report.FormatText, report.FormatMarkdown, report.FormatJSON}

// addReportFormat declares --format, the format of a run's report.
func addReportFormat(s *settings, def string) *setting {
	return s.enum("format", def, reportFormats, "format of the run's report on stdout", "INGEST_REPORT_FORMAT")
}

// addIngest declares the options of the commands that ingest a tree.
func addIngest(s *settings) *ingestOpts {
	o := &ingestOpts{
		commonOpts:  addCommon(s),
		dryRun:      s.flag("dry-run", "run the whole ingest, report what would happen, then roll back", "INGEST_DRY_RUN"),
		reread:      s.flag("reread", "read and compare the whole run even when its inputs and the data are unchanged since its last ingest", "INGEST_REREAD"),
		format:      addReportFormat(s, report.FormatText),
		summaryJSON: s.str("summary-json", "", "also write the JSON summary to this file (- for stdout)", "INGEST_SUMMARY_JSON"),
		unmappedOut: s.str("unmapped-output", "", "write unmapped-entities.json here when anything is unmapped (- for stdout)", "UNMAPPED_ENTITIES_OUTPUT"),
		catalog:     s.str("catalog", "", "comma-separated alias-table extension files (JSON, same shape as the embedded catalog)", "INGEST_CATALOG"),
		overrides:   s.str("overrides", "", "comma-separated run-override files (JSON, same shape as the embedded ledger)", "INGEST_OVERRIDES"),
		repo:        s.repo("repo", "SemiAnalysisAI/InferenceX", "repository the run belongs to (OWNER/NAME)", "INGEST_REPO"),
		runID:       s.id("run-id", "GitHub workflow run id (default: the run in artifacts.json)", "INGEST_RUN_ID"),
		attempt:     s.intIn("attempt", "", 1, 32767, "run attempt (default: artifacts.json, else 1)", "INGEST_RUN_ATTEMPT"),
		runDate:     s.str("run-date", "", "run creation time, RFC 3339 or YYYY-MM-DD (default: artifacts.json)", "INGEST_RUN_DATE"),
		runStarted: s.str("run-started-at", "", "when the run's attempt started, RFC 3339 (default: artifacts.json): orders the runs of one day "+
			"and dates the dashboard's as-of-run view", "INGEST_RUN_STARTED_AT"),
		runName:    s.str("run-name", "", "workflow run name", "INGEST_RUN_NAME"),
		headSHA:    s.str("head-sha", "", "head commit of the run", "INGEST_HEAD_SHA"),
		headBranch: s.str("head-branch", "", "head branch of the run", "INGEST_HEAD_BRANCH"),
		runURL:     s.str("run-url", "", "web URL of the run", "INGEST_RUN_URL"),
		conclusion: s.str("conclusion", "", "run conclusion (success, failure, …)", "INGEST_RUN_CONCLUSION"),
		event:      s.str("event", "", "event that triggered the run (push, pull_request, …)", "INGEST_RUN_EVENT"),
		coverage:   addCoverage(s),
		publish:    addPublish(s),
		invalidate: addInvalidate(s),
	}
	o.addNoMigrate(s)
	return o
}

// runIdentityFlags are the options naming the run of an ingest.
var runIdentityFlags = []string{"run-id", "attempt", "repo", "run-date", "run-started-at", "run-name", "head-sha", "head-branch", "run-url", "conclusion", "event"}

func (a *app) loadCommand() *cobra.Command {
	cmd, s, run := a.command("load DIR", "ingest a downloaded run tree: ingest load DIR --run-id N",
		"Ingest a downloaded run tree (DIR, which may come before, between or after the flags).", 1)
	opts := addIngest(s)
	artifacts := s.str("artifacts", "", "the run tree (also the first argument)", "INGEST_ARTIFACTS_PATH")
	env := a.env
	run(func(ctx context.Context, positional []string) int {
		dir := artifacts.String()
		if len(positional) == 1 {
			dir = positional[0]
		}
		if dir == "" {
			fmt.Fprintln(env.Stderr, "ingest load: the run tree is required (ingest load DIR, or INGEST_ARTIFACTS_PATH)")
			return ExitUsage
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			fmt.Fprintf(env.Stderr, "ingest load: the run tree %q is not a directory\n", dir)
			return ExitUsage
		}
		log, cfg, code := prepareIngest(opts, env)
		if code != ExitOK {
			return code
		}
		defer log.Sync()
		// Checked before anything connects: without a listing the run id can
		// only come from the command line.
		if cfg.Run.SourceRunID == 0 && !hasListing(dir) {
			fmt.Fprintf(env.Stderr, "ingest load: the run tree %q has no %s (nor %s) to take the run id from: pass --run-id (or INGEST_RUN_ID)\n",
				dir, source.ListingFile, source.ManifestFile)
			return ExitUsage
		}
		return ingestPrepared(ctx, env, opts, log, cfg, dir, createHint)
	})
	return cmd
}

// hasListing reports whether the tree root holds a listing (which, even
// when unusable, the ingest reads and reports on).
func hasListing(dir string) bool {
	for _, name := range []string{source.ListingFile, source.ManifestFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// ingestTree is the shared body of load and demo. missingHint ends the
// refusal of a dry run whose database does not exist.
func ingestTree(ctx context.Context, env Env, opts *ingestOpts, dir, missingHint string) int {
	log, cfg, code := prepareIngest(opts, env)
	if code != ExitOK {
		return code
	}
	defer log.Sync()
	return ingestPrepared(ctx, env, opts, log, cfg, dir, missingHint)
}

// ingestPrepared loads the reference data, opens the store (refusing, for a
// dry run, a missing or unmigrated database) and ingests dir with cfg.
func ingestPrepared(ctx context.Context, env Env, opts *ingestOpts, log *zap.Logger, cfg ingest.Config, dir, missingHint string) int {
	deps, err := loadDeps(opts, log)
	if err != nil {
		return notStarted(env, opts, log, fail(env, "%v", err))
	}
	deps.LargeHeap = env.GC.LargeHeap
	tree := openTree(ctx, dir, deps.Build != nil, log)
	st, err := openIngestStore(ctx, opts, log, missingHint)
	if err != nil {
		tree.discard()
		return notStarted(env, opts, log, failOpen(env, cancelled(ctx, err)))
	}
	defer st.Close()
	sum, code := ingestDir(ctx, env, opts, log, cfg, deps, st, tree)
	warnOutputs(env, opts, sum, code, log)
	return code
}

// warnOutputs writes the ingest's step outputs ($GITHUB_OUTPUT); one that
// cannot be written is a warning, never a failure of the ingest.
func warnOutputs(env Env, opts *ingestOpts, sum *schema.Summary, code int, log *zap.Logger) {
	if err := writeGitHubOutputs(env, ingestOutputs(opts.commonOpts, sum, code)); err != nil {
		log.Warn("could not write the step outputs", zap.Error(err))
	}
}

// notStarted writes the step outputs of an ingest that never began
// (status "not started": the database unreachable, the reference data
// unreadable) and returns code.
func notStarted(env Env, opts *ingestOpts, log *zap.Logger, code int) int {
	warnOutputs(env, opts, nil, code, log)
	return code
}

// prepareIngest builds the logger and the run configuration from the
// options; a non-zero code is a usage error, found before any connection.
func prepareIngest(opts *ingestOpts, env Env) (*zap.Logger, ingest.Config, int) {
	started := time.Now()
	log, err := newLogger(opts.commonOpts, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return nil, ingest.Config{}, ExitUsage
	}
	cfg, err := ingestConfig(opts, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return nil, ingest.Config{}, ExitUsage
	}
	if err := opts.invalidate.check(env.Getenv); err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return nil, ingest.Config{}, ExitUsage
	}
	if err := opts.publish.check(opts.commonOpts); err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return nil, ingest.Config{}, ExitUsage
	}
	// The report's "took" is the whole command's: the download and the
	// opening of the tree included.
	cfg.Started = started
	return log, cfg, ExitOK
}

// ingestDir ingests the run tree being opened into st: the one ingest path
// of load, demo and run. It returns the summary (nil when the ingest never started)
// and the exit code.
func ingestDir(ctx context.Context, env Env, opts *ingestOpts, log *zap.Logger, cfg ingest.Config, deps ingest.Deps, st *store.Store, opening *openingTree) (*schema.Summary, int) {
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	closePublish := opts.publish.configure(&cfg, opts.commonOpts, log)
	defer closePublish()
	if opening.digest != nil {
		// Stopped unless the ingest waited for it (an ingest that never
		// starts, or a caller's own TreeDigest).
		defer opening.digest.Stop()
	}
	if cfg.TreeDigest == nil {
		cfg.TreeDigest = opening.digest
	}
	tree, err := opening.wait()
	if err != nil {
		return nil, fail(env, "%v", cancelled(ctx, err))
	}
	defer tree.Close()
	log.Info("run tree opened", zap.String("dir", opening.dir), zap.Int("artifacts", len(tree.Artifacts)),
		zap.Bool("listing", tree.HasListing), zap.Duration("took", opening.took))

	var progress *stageProgress
	if isTerminal(env.Stderr) {
		progress = newStageProgress(env.Stderr, time.Now)
		deps.Progress = progress
	}
	var stopRedraw func()
	if progress != nil {
		stopRedraw = redraw(progress)
	}
	sum, runErr := ingest.Run(ctx, cfg, tree, deps)
	if progress != nil {
		stopRedraw()
		progress.Close()
	}
	if runErr == nil {
		ingest.RefreshAfterIngest(ctx, st, sum, log)
		opts.invalidate.after(ctx, env, sum, log)
	}
	// The abort is said before the report, so that the report's verdict
	// is the last thing a person at a terminal reads.
	if runErr != nil {
		fmt.Fprintln(env.Stderr, "ingest: aborted:", github.RedactURLText(runErr.Error()))
	}
	if err := writeOutputs(env, opts, sum, log); err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		opts.outputFailed = true
		if runErr == nil {
			// The run is committed; only an output is missing.
			return sum, ExitCompletedWithFailures
		}
	}
	if runErr != nil {
		if errors.Is(runErr, ingest.ErrCoverageRefused) {
			return sum, ExitCoverageRefused
		}
		return sum, ExitAborted
	}
	// A purged run's only possible failure is the refresh of
	// latest_benchmarks after what it deleted.
	if sum.Status == schema.StatusCompletedWithFailures || sum.Status == schema.StatusPurged && len(sum.Failures) > 0 {
		return sum, ExitCompletedWithFailures
	}
	return sum, ExitOK
}

// createHint ends the refusal of a dry run whose database does not exist.
const createHint = `create it, then run "ingest migrate up"`

// openIngestStore opens the store of an ingest. A real ingest migrates
// first (unless --no-migrate); a dry run changes nothing, so it neither
// creates nor migrates the database: it refuses one that does not exist
// (ending the message with missingHint) or is not migrated.
func openIngestStore(ctx context.Context, opts *ingestOpts, log *zap.Logger, missingHint string) (*store.Store, error) {
	if !*opts.dryRun {
		return openStore(ctx, opts.commonOpts, log, true)
	}
	st, err := store.OpenWith(ctx, opts.dbURL.String(), opts.store, log)
	if store.IsMissingDatabase(err) {
		return nil, fmt.Errorf("the database %q does not exist: a dry run changes nothing, so it does not create it; %s",
			store.DatabaseName(opts.dbURL.String()), missingHint)
	}
	if err != nil {
		return nil, err
	}
	if err := checkServer(ctx, opts.commonOpts, st, log); err != nil {
		st.Close()
		return nil, err
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	if v.Dirty || v.Version > v.Latest {
		st.Close()
		return nil, v.Problem()
	}
	if v.Version < v.Latest {
		st.Close()
		return nil, fmt.Errorf("the database is not migrated (schema version %d, this binary needs %d): "+
			"a dry run changes nothing, so it does not migrate; run \"ingest migrate up\" first", v.Version, v.Latest)
	}
	return st, nil
}

func ingestConfig(opts *ingestOpts, env Env) (ingest.Config, error) {
	cfg := ingest.Config{Target: opts.target.name, DryRun: *opts.dryRun, Reread: *opts.reread, ToolVersion: toolVersion(env.Version)}
	cfg.Run = schema.RunIdentity{Repo: opts.repo.String(), SourceRunID: opts.runID.int64(), SourceRunAttempt: int(opts.attempt.int64())}
	if err := opts.coverage.apply(&cfg); err != nil {
		return cfg, err
	}
	if err := checkRunURL(opts, env); err != nil {
		return cfg, err
	}
	cfg.Meta = schema.RunMeta{Name: opts.runName.String(), HeadSHA: opts.headSHA.String(), HeadBranch: opts.headBranch.String(),
		HTMLURL: github.RedactURLText(opts.runURL.String()), Conclusion: opts.conclusion.String(), Event: opts.event.String()}
	if d := opts.runDate.String(); d != "" {
		t, err := parseDate(d)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", opts.runDate.label(), err)
		}
		if err := checkRunDate(t, time.Now()); err != nil {
			return cfg, fmt.Errorf("%s: %w", opts.runDate.label(), err)
		}
		cfg.Meta.CreatedAt = t
	}
	if v := opts.runStarted.String(); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return cfg, invalidValue(v, opts.runStarted.name, opts.runStarted.from, errors.New("want an RFC 3339 time (2026-11-20T08:10:00Z)"))
		}
		if err := checkRunDate(t, time.Now()); err != nil {
			return cfg, fmt.Errorf("%s: %w", opts.runStarted.label(), err)
		}
		if c := cfg.Meta.CreatedAt; !c.IsZero() && t.Before(c) {
			return cfg, fmt.Errorf("%s: %s is before the run's creation (%s, %s): a run starts once created", opts.runStarted.label(),
				t.UTC().Format(time.RFC3339), c.UTC().Format(time.RFC3339), opts.runDate.label())
		}
		cfg.Meta.RunStartedAt = t
	}
	if server, repo, id := env.Getenv("GITHUB_SERVER_URL"), env.Getenv("GITHUB_REPOSITORY"), env.Getenv("GITHUB_RUN_ID"); server != "" && repo != "" && id != "" {
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			cfg.IngestRunURL = github.RedactURLText(server + "/" + repo + "/actions/runs/" + id)
		}
	}
	return cfg, nil
}

// checkRunURL refuses a --run-url that is not an http(s) URL on the web
// host of the GitHub in use (github.com, or the host of the configured
// GitHub API: github.WebHost): the report links it as the run.
func checkRunURL(opts *ingestOpts, env Env) error {
	raw := opts.runURL.String()
	if raw == "" {
		return nil
	}
	api := env.Getenv("GITHUB_API_URL")
	if opts.githubAPI != nil {
		api = opts.githubAPI.String()
	}
	if api == "" {
		api = github.DefaultBaseURL
	}
	host, err := github.WebHost(api)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.runURL.label(), err)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil ||
		(!strings.EqualFold(u.Host, "github.com") && !strings.EqualFold(u.Host, host)) {
		want := "github.com"
		if host != want {
			want += " or " + host
		}
		return fmt.Errorf("invalid value %q for %s: want an http(s) URL on %s (the GitHub in use)", github.RedactURLText(raw), opts.runURL.label(), want)
	}
	return nil
}

// runDateFloor is the earliest run date accepted: InferenceX benchmark
// runs start in 2024, so an earlier date is a mistake (0001-01-01 would
// also read as "no date" and be replaced by the ingest time).
func runDateFloor() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

// runDateSlack is how far ahead of now a run date may be (clock skew,
// time zones): beyond it, the run would outrank every newer one in
// latest_benchmarks until that date.
const runDateSlack = 24 * time.Hour

// checkRunDate refuses a run date before the project existed or more than
// a day ahead of now.
func checkRunDate(t, now time.Time) error {
	switch {
	case t.Before(runDateFloor()):
		return fmt.Errorf("%s is before %s, before any InferenceX run", t.UTC().Format(time.RFC3339), runDateFloor().Format("2006-01-02"))
	case t.After(now.Add(runDateSlack)):
		return fmt.Errorf("%s is more than a day in the future (it would outrank every newer run in latest_benchmarks)", t.UTC().Format(time.RFC3339))
	}
	return nil
}

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 nor YYYY-MM-DD", s)
	}
	return t, nil
}

func loadDeps(opts *ingestOpts, log *zap.Logger) (ingest.Deps, error) {
	return loadDepsFrom(opts.catalog.String(), opts.overrides.String(), log)
}

// loadDepsFrom loads the catalog and the run overrides, each with its
// comma-separated extension files.
func loadDepsFrom(catalogFiles, overrideFiles string, log *zap.Logger) (ingest.Deps, error) {
	// Build: the binary, then every extension file as read.
	id, err := buildid.Read()
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("identify the binary: %w", err)
	}
	build := sha256.New()
	fmt.Fprintf(build, "%d:%s", len(id), id)
	catExt, closeCat, err := readFiles(catalogFiles)
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("--catalog: %w", err)
	}
	defer closeCat()
	io.WriteString(build, "catalog:")
	if catExt, err = hashed(catExt, build); err != nil {
		return ingest.Deps{}, fmt.Errorf("--catalog: %w", err)
	}
	cat, err := catalog.Load(catExt...)
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("catalog: %w", err)
	}
	ovExt, err := readOverrideFiles(overrideFiles)
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("--overrides: %w", err)
	}
	io.WriteString(build, "overrides:")
	for _, e := range ovExt {
		fmt.Fprintf(build, "%d:", len(e.Data))
		build.Write(e.Data)
	}
	ov, err := overrides.Load(ovExt...)
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("overrides: %w", err)
	}
	return ingest.Deps{Catalog: cat, Normalizer: benchmark.NewNormalizer(cat), Overrides: ov, Log: log, Now: time.Now,
		Build: build.Sum(nil)}, nil
}

// hashed reads each extension file whole (they are small), adds its
// length and bytes to h, and returns readers of the bytes read.
func hashed(rs []io.Reader, h io.Writer) ([]io.Reader, error) {
	out := make([]io.Reader, len(rs))
	for i, r := range rs {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
		out[i] = bytes.NewReader(b)
	}
	return out, nil
}

// printReport prints the report in format on stdout; the text report on a
// terminal ends with the verdict, in colour unless NO_COLOR is set.
func printReport(env Env, sum *schema.Summary, format string) error {
	if format != report.FormatText || !isTerminal(env.Stdout) {
		return report.Render(env.Stdout, sum, format)
	}
	_, err := io.WriteString(env.Stdout, report.TextTerminal(sum, env.Getenv("NO_COLOR") == ""))
	return err
}

// writeOutputs prints the report and writes the side files.
func writeOutputs(env Env, opts *ingestOpts, sum *schema.Summary, log *zap.Logger) error {
	if err := printReport(env, sum, opts.format.String()); err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	if opts.summaryJSON.String() != "" {
		if err := writeOutput(env, opts.summaryJSON, func(w io.Writer) error { return report.JSON(w, sum) }); err != nil {
			return err
		}
	}
	// Nothing unmapped: the file is not written (an earlier one stays).
	if opts.unmappedOut.String() != "" && !sum.Unmapped.Empty() {
		if err := writeOutput(env, opts.unmappedOut, func(w io.Writer) error {
			_, err := report.UnmappedEntities(w, sum.Unmapped)
			return err
		}); err != nil {
			return err
		}
	}
	if p := env.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := appendStepSummary(p, report.StepSummary(sum)); err != nil {
			log.Warn("could not write the job summary", zap.Error(err))
		}
	}
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		writeAnnotations(env.Stderr, sum)
	}
	return nil
}
