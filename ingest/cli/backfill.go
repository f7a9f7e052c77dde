package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// allBranches is the --branch value that lists runs of every branch.
const allBranches = "*"

// backfillCommand ingests many runs, sharing the work with any other worker
// started with the same parameters on the same database.
func (a *app) backfillCommand() *cobra.Command {
	cmd, s, run := a.command("backfill --repo OWNER/NAME", "ingest a workflow's history, a run list or a directory of trees: ingest backfill --repo R",
		"Ingest a workflow's runs (--workflow, --branch, --since, --until), a list of run ids (--runs), the run trees\n"+
			"under a directory (--from-dir) or the runs of the artifact archive (--source archive --archive URL, --since,\n"+
			"--until), oldest first. Any number of workers started with the same parameters on the same\n"+
			"database share the work; rerun the command to resume. The token comes from GH_TOKEN, else GITHUB_TOKEN (as gh\n"+
			"takes it; never a flag).", 0)
	o := &backfillOpts{common: addCommon(s)}
	o.common.addNoMigrate(s)
	o.repo = s.repo("repo", "", "repository of the runs, OWNER/NAME (required)", "INGEST_REPO")
	o.workflow = s.str("workflow", "", "workflow file (run-sweep.yml) or id whose runs to list (default: every workflow)", "INGEST_BACKFILL_WORKFLOW")
	o.branch = s.str("branch", "main", "head branch of the runs to list ('*': every branch)", "INGEST_BACKFILL_BRANCH")
	o.since = s.str("since", "", "list runs created on or after this day (YYYY-MM-DD) or time (RFC 3339)", "INGEST_BACKFILL_SINCE")
	o.until = s.str("until", "", "list runs created on or before this day (the whole day) or time", "INGEST_BACKFILL_UNTIL")
	o.runsFile = s.str("runs", "", "file of run ids to backfill instead of listing the workflow's runs", "INGEST_BACKFILL_RUNS")
	o.fromDir = s.str("from-dir", "", "backfill the run trees under this directory instead of downloading", "INGEST_BACKFILL_FROM_DIR")
	o.reingest = s.flag("reingest", "ingest runs again even when the ledger shows them ingested", "INGEST_BACKFILL_REINGEST")
	o.reread = s.flag("reread", "read and compare every run in full even when its inputs and the data are unchanged since its last ingest", "INGEST_REREAD")
	o.dryRun = s.flag("dry-run", "list what would be done, oldest run first; write nothing", "INGEST_DRY_RUN")
	o.worker = s.str("worker", "", "name of this worker in the queue (default HOST:PID)", "INGEST_BACKFILL_WORKER")
	o.jobs = s.intIn("jobs", "1", 1, 16, "runs this worker fetches and ingests at once, each in its own transaction (more pays while fetches wait on the network or the machine is shared)", "INGEST_BACKFILL_JOBS")
	o.keep = s.flag("keep-downloads", "keep each run's downloaded artifacts in the cache (default: removed once the run is settled)", "INGEST_KEEP_DOWNLOADS")
	o.catalogFiles = s.str("catalog", "", "comma-separated alias-table extension files", "INGEST_CATALOG")
	o.overrideFiles = s.str("overrides", "", "comma-separated run-override files", "INGEST_OVERRIDES")
	o.gh = addGitHub(s).addDownloads(s)
	o.coverage = addCoverage(s)
	o.archive = addArchive(s)
	run(func(ctx context.Context, _ []string) int { return runBackfill(ctx, a.env, o) })
	return cmd
}

// backfillOpts are the options of backfill.
type backfillOpts struct {
	common                                                  *commonOpts
	repo, workflow, branch, since, until, runsFile, fromDir *setting
	worker, catalogFiles, overrideFiles, jobs               *setting
	reingest, reread, dryRun, keep                          *bool
	gh                                                      *githubOpts
	coverage                                                coverageOpts
	archive                                                 *archiveOpts
}

func runBackfill(ctx context.Context, env Env, o *backfillOpts) int {
	common, repo, workflow, branch, since, until := o.common, o.repo, o.workflow, o.branch, o.since, o.until
	runsFile, fromDir, worker, catalogFiles, overrideFiles := o.runsFile, o.fromDir, o.worker, o.catalogFiles, o.overrideFiles
	reingest, reread, dryRun, keep, ghOpts := o.reingest, o.reread, o.dryRun, o.keep, o.gh
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ingest backfill: "+format+"\n", a...)
		return ExitUsage
	}
	if err := requiredMissing(repo); err != nil { // a value given is checked as it is read
		return usageErr("%v", err)
	}
	mapping, err := filesDigest(catalogFiles.String(), overrideFiles.String())
	if err != nil {
		return usageErr("--catalog/--overrides: %v", err)
	}
	p := backfill.Params{Repo: repo.String(), Reingest: *reingest, Mapping: mapping}
	filtered := workflow.String() != "" || since.String() != "" || until.String() != "" || branch.given || branch.from != ""
	var src backfill.Source
	var gh *github.Client
	fetchFrom, err := o.archive.sourceOf()
	if err != nil {
		return usageErr("%v", err)
	}
	fromArchive := fetchFrom == github.SourceArchive && fromDir.String() == ""
	switch {
	case fromArchive && runsFile.String() != "":
		return usageErr("--runs looks the runs up on GitHub: with --source archive the archive's runs are listed (bound them with --since and --until)")
	case fromArchive && (workflow.String() != "" || branch.given || branch.from != ""):
		return usageErr("--workflow and --branch filter GitHub's listing: with --source archive the archive's runs are listed (--since and --until apply)")
	case runsFile.String() != "" && fromDir.String() != "":
		return usageErr("--runs and --from-dir cannot be combined")
	case fromDir.String() != "" && filtered:
		return usageErr("--workflow, --branch, --since and --until list runs from GitHub: they do not apply to --from-dir")
	case runsFile.String() != "" && filtered:
		return usageErr("--workflow, --branch, --since and --until list runs from GitHub: they do not apply to --runs")
	}
	// Each run is ingested under the coverage guard of load and run.
	var guard ingest.Config
	if err := o.coverage.apply(&guard); err != nil {
		return usageErr("%v", err)
	}
	log, err := newLogger(common, env)
	if err != nil {
		return usageErr("%v", err)
	}
	defer log.Sync()
	onTerminal := isTerminal(env.Stderr)
	// On a terminal the progress bar is the display: each run's own lines
	// are kept to warnings, unless the level was asked for.
	runLog := log
	if onTerminal && !common.logLevel.given && common.logLevel.from == "" {
		runLog = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	}

	if dir := fromDir.String(); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return usageErr("--from-dir: %v", err)
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return usageErr("--from-dir %q is not a directory", dir)
		}
		p.Source, p.Dir = "dir", abs
		src = &backfill.DirSource{Dir: abs, Log: runLog}
	} else if fromArchive {
		as := &backfill.ArchiveSource{Source: github.SourceArchive, KeepDownloads: *keep, Log: runLog}
		p.Source, p.Dir = "archive", o.archive.url.String()
		if v := since.String(); v != "" {
			t, err := parseDate(v)
			if err != nil {
				return usageErr("--since: %v", err)
			}
			as.Since, p.Since = t.UTC(), t.UTC().Format(time.RFC3339)
		}
		if v := until.String(); v != "" {
			t, err := parseDate(v)
			if err != nil {
				return usageErr("--until: %v", err)
			}
			as.Until, p.Until = t.UTC(), t.UTC().Format(time.RFC3339)
		}
		gopts, err := ghOpts.options(env, repo.String(), "")
		if err != nil {
			return usageErr("%v", err)
		}
		arch, err := o.archive.open(ctx, env)
		if err != nil {
			return usageErr("%v", err)
		}
		defer arch.Close()
		gopts.Log, gopts.Archive = runLog, arch
		if gh, err = github.New(gopts); err != nil {
			return usageErr("%v", err)
		}
		as.Archive, as.Client = arch, gh
		src = as
	} else {
		gs := &backfill.GitHubSource{KeepDownloads: *keep, Log: runLog}
		if f := runsFile.String(); f != "" {
			file, err := os.Open(f)
			if err != nil {
				return usageErr("--runs: %v", err)
			}
			ids, digest, err := backfill.ReadRunIDs(file, f)
			file.Close()
			if err != nil {
				return usageErr("--runs: %v", err)
			}
			gs.RunIDs, p.Source, p.RunsFile = ids, "runs", digest
		} else {
			p.Source, p.Workflow = "github", workflow.String()
			if b := branch.String(); b != allBranches {
				p.Branch, gs.Filter.Branch = b, b
			}
			gs.Filter.Workflow = workflow.String()
			if v := since.String(); v != "" {
				t, err := parseDate(v)
				if err != nil {
					return usageErr("--since: %v", err)
				}
				gs.Filter.Since, p.Since = t.UTC(), t.UTC().Format(time.RFC3339)
			}
			if v := until.String(); v != "" {
				t, err := parseDate(v)
				if err != nil {
					return usageErr("--until: %v", err)
				}
				if _, dayErr := time.Parse("2006-01-02", v); dayErr == nil {
					t = t.Add(24*time.Hour - time.Second) // the whole day
				}
				gs.Filter.Until, p.Until = t.UTC(), t.UTC().Format(time.RFC3339)
			}
			if !gs.Filter.Since.IsZero() && !gs.Filter.Until.IsZero() && gs.Filter.Until.Before(gs.Filter.Since) {
				return usageErr("--until is before --since")
			}
		}
		gopts, err := ghOpts.options(env, repo.String(), "a token with actions:read, or use --from-dir")
		if err != nil {
			return usageErr("%v", err)
		}
		// Downloads report through the log: the bar is the backfill's.
		gopts.Log = runLog
		arch, err := o.archive.open(ctx, env)
		if err != nil {
			return usageErr("%v", err)
		}
		if arch != nil && fetchFrom == github.SourceAuto {
			defer arch.Close()
			gopts.Archive = arch
		}
		gh, err = github.New(gopts)
		if err != nil {
			return usageErr("%v", err)
		}
		gs.Client = gh
		src = gs
	}
	name := worker.String()
	if name == "" {
		host, _ := os.Hostname()
		name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}

	// The catalog and the run overrides first: a malformed file is refused
	// before anything is written (a migration included), dry run or not.
	deps, err := loadDepsFrom(catalogFiles.String(), overrideFiles.String(), runLog)
	if err != nil {
		return fail(env, "%v", err)
	}
	*common.noMigrate = *common.noMigrate || *dryRun // a dry run writes nothing, not even a migration
	jobs := int(o.jobs.int64())
	common.store.Jobs = jobs
	st, err := openStore(ctx, common, log, !*dryRun)
	if err != nil {
		return failOpen(env, err)
	}
	defer st.Close()

	if *dryRun {
		plan, err := backfill.Plan(ctx, p, st, src)
		if err != nil {
			return fail(env, "%v", err)
		}
		if err := backfill.WritePlan(env.Stdout, plan); err != nil {
			return fail(env, "%v", err)
		}
		return ExitOK
	}

	deps.LargeHeap = env.GC.LargeHeap // one Target: the workers share its hold
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	cfg := ingest.Config{Run: schema.RunIdentity{Repo: repo.String()}, Target: common.target.name, ToolVersion: toolVersion(env.Version), Reread: *reread,
		CoverageGuard: guard.CoverageGuard, AcceptCoverageLoss: guard.AcceptCoverageLoss}
	if common.target.name != ProductionTarget {
		// A backfill into staging stages each run (a production backfill
		// is not compared with staging: promote runs one by one).
		cfg.Publish = stagedPublish(common.server)
	}
	var refused atomic.Bool // the coverage guard rolled back a run of this worker
	ingestTree := func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		cfg.TreeDigest = source.StartDigest(ctx, dir) // hashed while the tree is opened and read
		tree, err := source.Open(ctx, dir, runLog)
		if err != nil {
			return nil, err
		}
		defer tree.Close()
		sum, err := ingest.Run(ctx, cfg, tree, deps)
		if errors.Is(err, ingest.ErrCoverageRefused) {
			refused.Store(true)
		}
		return sum, err
	}
	progress := backfill.NewLogProgress(log)
	if onTerminal {
		progress = newBackfillProgress(env.Stderr)
	}
	res, err := backfill.Run(ctx, backfill.Options{Params: p, Config: cfg, Worker: name, Jobs: jobs, Progress: progress, Log: log},
		st, src, ingestTree)
	if res != nil {
		if werr := backfill.WriteResult(env.Stdout, res, name); werr != nil && err == nil {
			err = werr
		}
		if p.Source == "archive" {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			runs, rerr := st.BackfillRuns(cctx, res.Pass.ID)
			cancel()
			if rerr == nil {
				rerr = backfill.WriteMonths(env.Stdout, p.Dir, backfill.Months(runs))
			}
			if rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	// Each run's ingest updated latest_benchmarks in its transaction; the
	// refresh at the end of the pass applies what is left (an update that
	// failed, changes other writers committed), normally nothing.
	refreshFailed := false
	if err == nil && !res.Interrupted {
		r, rerr := st.RefreshLatestBenchmarks(ctx, false)
		if rerr != nil {
			fmt.Fprintf(env.Stderr, "ingest backfill: %v (latest_benchmarks is stale until the next ingest or `ingest refresh` succeeds)\n", rerr)
			refreshFailed = true
		} else {
			log.Info("latest_benchmarks after the backfill", zap.String("refresh", r.Status), zap.Int64("changes", r.Changes),
				zap.Int64("took_ms", r.DurationMS))
		}
	}
	switch {
	case err != nil:
		return fail(env, "backfill: %v", err)
	case res.Interrupted:
		fmt.Fprintln(env.Stderr, "ingest backfill: interrupted; the run in progress was rolled back. Rerun the same command to resume.")
		return ExitAborted
	case refused.Load():
		// Refused runs are settled failed, named with the guard's reason.
		return ExitCoverageRefused
	case res.Counts.Failed > 0 || res.Totals.Failed > 0 || res.Totals.WithFailures > 0 || res.Queued[schema.BackfillFailed] > 0:
		// The pass's failed runs, whichever worker settled them: a worker
		// that resumes a pass with failures must not report success.
		return ExitCompletedWithFailures
	case refreshFailed:
		return ExitCompletedWithFailures
	}
	return ExitOK
}

// filesDigest is a digest of the contents of the comma-separated files of
// each list ("" when there are none).
func filesDigest(lists ...string) (string, error) {
	h := sha256.New()
	any := false
	for i, list := range lists {
		for _, p := range strings.Split(list, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			any = true
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "%d:%x\n", i, sum)
		}
	}
	if !any {
		return "", nil
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}
