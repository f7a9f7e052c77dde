package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// runCommand fetches a workflow run from GitHub, ingests it exactly as load
// does, and posts the report on the run's pull request.
func (a *app) runCommand() *cobra.Command {
	cmd, s, run := a.command("run --run-id N", "fetch a run from GitHub, ingest it, comment on its PR: ingest run --run-id N",
		"Fetch a run from GitHub, ingest it as load does, and post the report on its pull request.\n"+
			"The token comes from GH_TOKEN, else GITHUB_TOKEN (as gh takes it; never a flag).", 0)
	opts := addIngest(s)
	mergeRun := s.id("merge-run-id", "run that triggered the ingest when the sweep was reused (default: --run-id)", "INGEST_MERGE_RUN_ID")
	prFlag := s.id("pr", "pull request to comment on (default: reuse metadata, changelog pr-link, PRs of the merge commit)", "INGEST_PR_NUMBER")
	gh := addGitHub(s).addDownloads(s).addCommentAuthor(s)
	opts.githubAPI = gh.baseURL
	arch := addArchive(s)
	noComment := s.flag("no-comment", "print the PR comment body instead of posting it", "INGEST_NO_COMMENT")
	run(func(ctx context.Context, _ []string) int {
		return runRun(ctx, a.env, opts, mergeRun, prFlag, gh, arch, noComment)
	})
	return cmd
}

func runRun(ctx context.Context, env Env, opts *ingestOpts, mergeRun, prFlag *setting, gh *githubOpts, arch *archiveOpts, noComment *bool) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ingest run: "+format+"\n", a...)
		return ExitUsage
	}
	if opts.runID.String() == "" {
		return usageErr("--run-id (or INGEST_RUN_ID) is required")
	}
	mergeID, pr := mergeRun.int64(), prFlag.int64()
	src, err := arch.sourceOf()
	if err != nil {
		return usageErr("%v", err)
	}
	need := "a token with actions:read, and pull-requests:write to comment"
	if arch.tokenOptional() {
		need = "" // the archive alone, with the run's facts inferred
	}
	gopts, err := gh.options(env, opts.repo.String(), need)
	if err != nil {
		return usageErr("%v", err)
	}
	if src != github.SourceGitHub && mergeID != 0 && mergeID != opts.runID.int64() {
		return usageErr("--merge-run-id: a reused sweep is fetched from GitHub: use --source github")
	}
	log, cfg, code := prepareIngest(opts, env)
	if code != ExitOK {
		return code
	}
	defer log.Sync()

	gopts.Log = log
	stopRedraw := func() {}
	if isTerminal(env.Stderr) {
		download := newDownloadProgress(env.Stderr, time.Now)
		gopts.Progress = download
		stopRedraw = redraw(download)
	}
	defer func() { stopRedraw() }()
	archived, err := arch.open(ctx, env)
	if err != nil {
		return notStarted(env, opts, log, usageErr("%v", err))
	}
	if archived != nil {
		defer archived.Close()
		gopts.Archive = archived
	}
	client, err := github.New(gopts)
	if err != nil {
		return notStarted(env, opts, log, usageErr("%v", err))
	}
	deps, err := loadDeps(opts, log)
	if err != nil {
		return notStarted(env, opts, log, fail(env, "%v", err))
	}
	deps.LargeHeap = env.GC.LargeHeap
	// The database first: a fetch that fails is then recorded in the
	// ledger (exit 1 means "the ledger records why").
	st, err := openIngestStore(ctx, opts, log, createHint)
	if err != nil {
		return notStarted(env, opts, log, failOpen(env, cancelled(ctx, err)))
	}
	defer st.Close()
	res, err := client.Fetch(ctx, github.Request{SourceRunID: cfg.Run.SourceRunID, MergeRunID: mergeID, Attempt: cfg.Run.SourceRunAttempt, Source: src})
	stopRedraw()
	stopRedraw = func() {}
	if err != nil {
		return fetchAborted(ctx, env, opts, log, cfg, deps, st, cfg.Started, mergeID, err)
	}
	cfg.Run.SourceRunAttempt = res.Source.Meta.RunAttempt
	cfg.Run.MergeRunID, cfg.Run.MergeRunAttempt = res.Merge.Meta.RunID, res.Merge.Meta.RunAttempt
	cfg.Meta = cfg.Meta.Merge(res.Meta)
	cfg.MergeMeta = cfg.MergeMeta.Merge(res.Merge.Meta)
	cfg.SourceNotes = res.Notes

	sum, code := ingestDir(ctx, env, opts, log, cfg, deps, st, openTree(ctx, res.Dir, deps.Build != nil, log))
	if sum != nil {
		// Without a token (the archive alone) there is no one to post as.
		noPost := *noComment || sum.DryRun || gopts.Token == ""
		if err := postReport(ctx, env, client, res, sum, int(pr), noPost, opts.format.String(), log); err != nil {
			fmt.Fprintln(env.Stderr, "ingest:", err)
			if code == ExitOK {
				// The run is written; only the comment is missing.
				code = ExitCompletedWithFailures
			}
		}
	}
	warnOutputs(env, opts, sum, code, log)
	return code
}

// fetchAborted records a fetch that failed as an aborted ingest of the run
// (unless this is a dry run), prints its report and the reason, and
// returns ExitAborted.
func fetchAborted(ctx context.Context, env Env, opts *ingestOpts, log *zap.Logger, cfg ingest.Config, deps ingest.Deps,
	st *store.Store, started time.Time, mergeID int64, err error) int {
	var fe *github.FetchError
	if cfg.Run.SourceRunAttempt == 0 && errors.As(err, &fe) {
		cfg.Run.SourceRunAttempt = fe.Attempt
	}
	cfg.Run.MergeRunID = mergeID
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	sum, cause := ingest.RecordAbort(ctx, cfg, deps, started, fmt.Errorf("fetch run %d: %s", cfg.Run.SourceRunID, github.RedactURLText(err.Error())))
	if werr := writeOutputs(env, opts, sum, log); werr != nil {
		fmt.Fprintln(env.Stderr, "ingest:", werr)
	}
	fmt.Fprintln(env.Stderr, "ingest: aborted:", cause)
	warnOutputs(env, opts, sum, ExitAborted, log)
	return ExitAborted
}

// postReport posts the Markdown report on the run's pull request, editing
// the comment of an earlier ingest of the run when there is one. When
// told not to post, or when no pull request is found, it prints the body
// (unless stdout already holds it: --format md).
func postReport(ctx context.Context, env Env, client *github.Client, res *github.Result, sum *schema.Summary,
	pr int, noPost bool, format string, log *zap.Logger) error {
	body := report.Comment(sum)
	marker, _, _ := strings.Cut(body, "\n")
	printBody := func(why string) {
		if format == report.FormatMarkdown {
			return
		}
		w := env.Stdout
		if format == report.FormatJSON {
			w = env.Stderr // stdout is one JSON document
		}
		fmt.Fprintf(w, "\n--- PR comment (%s) ---\n%s\n", why, body)
	}
	if noPost {
		printBody("not posted")
		return nil
	}
	hints := github.PRHints{Explicit: pr, RunPRs: res.Source.PullRequests, Changelog: res.ChangelogPR, MergeHeadSHA: res.Merge.Meta.HeadSHA}
	if res.Reuse != nil && res.Reuse.SourcePRNumber != nil {
		hints.Reuse = *res.Reuse.SourcePRNumber
	}
	n, how, err := client.FindPR(ctx, hints)
	if err != nil {
		printBody("not posted")
		return fmt.Errorf("find the pull request: %w", err)
	}
	if n == 0 {
		log.Warn("no pull request found for the run: the report is not posted")
		printBody("no pull request found")
		return nil
	}
	c, err := client.UpsertComment(ctx, n, marker, body)
	if err != nil {
		printBody("not posted")
		return err
	}
	verb := "edited"
	if c.Created {
		verb = "posted"
	}
	fmt.Fprintf(env.Stderr, "ingest: report %s on pull request #%d (found by %s): %s\n", verb, n, how, c.URL)
	return nil
}
