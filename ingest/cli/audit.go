package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/audit"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/report"
)

// auditCommand is the missed-ingest watchdog: every completed run of the
// sweep workflow on the default branch since a date, matched with the
// target's ledger; each one without a successful ingest is listed with its
// cause and the command that recovers it; so is each changelog entry whose
// PR merged in the window with no run at its merge commit. Exit 0 when
// none is missed (purged runs aside), 3 when some are, 1 when GitHub or
// the ledger cannot be read.
func (a *app) auditCommand() *cobra.Command {
	cmd, s, run := a.command("audit --repo OWNER/NAME --since DATE",
		"list merged sweeps without a successful ingest, with cause and recovery command: ingest audit --repo R --since DATE",
		"List the merged sweeps (and changelog entries) since a date without a successful ingest in the target's ledger,\n"+
			"with the cause and the command that recovers each. The token comes from GH_TOKEN, else GITHUB_TOKEN (as gh\n"+
			"takes it; never a flag); it needs actions:read, and contents:read and pull-requests:read for the changelog.", 0)
	o := &auditOpts{common: addCommon(s)}
	o.repo = s.repo("repo", "", "repository of the sweeps, OWNER/NAME (required)", "INGEST_REPO")
	o.since = s.str("since", "", "audit runs created on or after this day (YYYY-MM-DD) or time (RFC 3339) (required)", "INGEST_AUDIT_SINCE")
	o.since.typ = "DATE"
	o.until = s.str("until", "", "audit runs created on or before this day (the whole day) or time", "INGEST_AUDIT_UNTIL")
	o.workflow = s.str("workflow", "run-sweep.yml", "the merge/sweep workflow file (or id) whose runs are the merged sweeps", "INGEST_AUDIT_WORKFLOW")
	o.branch = s.str("branch", "main", "the default branch", "INGEST_AUDIT_BRANCH")
	o.changelogPath = s.str("changelog", "perf-changelog.yaml", "the producer's changelog file on the branch, whose entries' PRs are merged sweeps too (\"\": not read)", "INGEST_AUDIT_CHANGELOG")
	o.overrideFiles = s.str("overrides", "", "comma-separated run-override files (purged runs are never proposed)", "INGEST_OVERRIDES")
	o.format = s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_AUDIT_FORMAT")
	o.archive = s.archiveURL("archive", "", "also compare the artifact archive (gs://BUCKET[/PREFIX] or a local mirror) with the ledger: its runs never ingested, "+
		"and ingested runs it lacks; without a token only the archive is audited (the project's: "+archive.Project+"; not compared unless named)", "INGEST_ARCHIVE")
	o.gh = addGitHub(s)
	run(func(ctx context.Context, _ []string) int { return runAudit(ctx, a.env, o) })
	return cmd
}

// auditOpts are the options of audit.
type auditOpts struct {
	common                                                                     *commonOpts
	repo, since, until, workflow, branch, changelogPath, overrideFiles, format *setting
	archive                                                                    *setting
	gh                                                                         *githubOpts
}

func runAudit(ctx context.Context, env Env, o *auditOpts) int {
	common, repo, since, until, workflow, branch := o.common, o.repo, o.since, o.until, o.workflow, o.branch
	changelogPath, overrideFiles, format, gh := o.changelogPath, o.overrideFiles, o.format, o.gh
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ingest audit: "+format+"\n", a...)
		return ExitUsage
	}
	if err := requiredMissing(repo, since); err != nil { // a value given is checked as it is read
		return usageErr("%v", err)
	}
	filter := github.RunFilter{Workflow: workflow.String(), Branch: branch.String()}
	t, err := parseDate(since.String())
	if err != nil {
		return usageErr("%s: %v", since.label(), err)
	}
	filter.Since = t.UTC()
	if v := until.String(); v != "" {
		t, err := parseDate(v)
		if err != nil {
			return usageErr("%s: %v", until.label(), err)
		}
		if _, dayErr := time.Parse("2006-01-02", v); dayErr == nil {
			t = t.Add(24*time.Hour - time.Second) // the whole day
		}
		filter.Until = t.UTC()
		if filter.Until.Before(filter.Since) {
			return usageErr("--until is before --since")
		}
	}
	need := "a token with actions:read, contents:read and pull-requests:read"
	if archiveURL(o.archive.String()) != "" {
		need = "" // the archive alone
	}
	gopts, err := gh.options(env, repo.String(), need)
	if err != nil {
		return usageErr("%v", err)
	}
	exts, err := readOverrideFiles(overrideFiles.String())
	if err != nil {
		return usageErr("--overrides: %v", err)
	}
	ov, err := overrides.Load(exts...)
	if err != nil {
		return usageErr("--overrides: %v", err)
	}
	st, log, code := connect(ctx, common, env)
	if st == nil {
		return code
	}
	defer st.Close()
	defer log.Sync()
	gopts.Log = log
	client, err := github.New(gopts)
	if err != nil {
		return usageErr("%v", err)
	}

	var archived *audit.ArchiveResult
	var arch *archive.Archive
	if u := archiveURL(o.archive.String()); u != "" {
		arch, err = openArchive(ctx, env, u)
		if err != nil {
			return usageErr("%v", err)
		}
		defer arch.Close()
		a, err := auditArchive(ctx, st, arch, repo.String(), filter, ov.RunPurged)
		if err != nil {
			return fail(env, "%v", err)
		}
		archived = &a
		if gopts.Token == "" {
			return writeAudit(env, format.String(), auditHeader{repo.String(), workflow.String(), branch.String(), common.target.name}, nil, archived)
		}
	}
	listing, err := client.ListRunEntries(ctx, filter)
	if err != nil {
		return fail(env, "list the runs of %s on %s: %v", workflow.String(), branch.String(), err)
	}
	runs := make([]audit.Run, 0, len(listing.Runs))
	ids := make([]int64, 0, len(listing.Runs))
	for _, r := range listing.Runs {
		runs = append(runs, audit.Run{ID: r.ID, Attempt: r.Attempt, Status: r.Status, Conclusion: r.Conclusion, CreatedAt: r.CreatedAt, HeadSHA: r.HeadSHA})
		ids = append(ids, r.ID)
	}
	ledger, err := st.AuditLedger(ctx, repo.String(), ids)
	if err != nil {
		return fail(env, "%v", err)
	}
	deps := audit.Deps{Repo: repo.String(), Purged: ov.RunPurged,
		Artifacts: func(id int64) (audit.Artifacts, error) {
			list, err := client.ListArtifacts(ctx, id)
			a := audit.Artifacts{Listed: len(list)}
			for _, l := range list {
				if l.Expired {
					a.Expired++
				}
			}
			return a, err
		}}
	if arch != nil {
		deps.Archive = arch.String()
		deps.Archived = func(id int64) (bool, error) {
			_, ok, err := arch.Find(ctx, id)
			return ok, err
		}
	}
	res, err := audit.Audit(runs, ledger, deps)
	if err != nil {
		return fail(env, "%v", err)
	}
	for _, r := range listing.Rejected {
		res.Rejected = append(res.Rejected, audit.Rejected{ID: r.ID, Reason: r.Reason})
	}
	if p := changelogPath.String(); p != "" {
		data, found, err := client.ReadFile(ctx, p, branch.String())
		if err != nil {
			return fail(env, "read the changelog: %v", err)
		}
		if !found {
			res.Changelog = &audit.Changelog{Path: p}
		} else {
			entries, err := mergedEntries(ctx, client, p, data, filter)
			if err != nil {
				return fail(env, "%v", err)
			}
			audit.AuditChangelog(&res, p, entries, runs)
		}
	}
	return writeAudit(env, format.String(), auditHeader{repo.String(), workflow.String(), branch.String(), common.target.name}, &res, archived)
}

// auditHeader names what an audit covered.
type auditHeader struct {
	Repo     string `json:"repo"`
	Workflow string `json:"workflow"`
	Branch   string `json:"branch"`
	Target   string `json:"target"`
}

// writeAudit prints the audit (res nil: the archive alone) and returns its
// exit code.
func writeAudit(env Env, format string, h auditHeader, res *audit.Result, archived *audit.ArchiveResult) int {
	var err error
	if format == report.FormatJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if res == nil {
			res = &audit.Result{Missed: []audit.Finding{}}
		}
		err = enc.Encode(struct {
			auditHeader
			audit.Result
			Archive *audit.ArchiveResult `json:"archive,omitempty"`
		}{h, *res, archived})
	} else {
		var b strings.Builder
		if res != nil {
			url := ""
			if archived != nil {
				url = archived.URL
			}
			b.WriteString(auditText(*res, h.Repo, h.Workflow, h.Branch, h.Target, url))
		}
		if archived != nil {
			b.WriteString(archiveAuditText(*archived, h.Target))
		}
		_, err = fmt.Fprint(env.Stdout, b.String())
	}
	if err != nil {
		return fail(env, "%v", err)
	}
	if (res != nil && res.Unresolved() > 0) || (archived != nil && archived.Unresolved() > 0) {
		return ExitCompletedWithFailures
	}
	return ExitOK
}

// auditArchive compares the archive's runs of the window with the ledger.
func auditArchive(ctx context.Context, st auditStore, arch *archive.Archive, repo string, f github.RunFilter, purged func(int64, int) (string, bool)) (audit.ArchiveResult, error) {
	url := arch.String()
	runs, err := arch.Runs(ctx)
	if err != nil {
		return audit.ArchiveResult{}, err
	}
	until := f.Until
	if until.IsZero() {
		until = time.Now().Add(24 * time.Hour)
	}
	held := make(map[int64]bool, len(runs))
	var inWindow []audit.Archived
	var ids []int64
	for _, r := range runs {
		held[r.ID] = true
		if r.Date.Before(f.Since.Truncate(24*time.Hour)) || r.Date.After(until) {
			continue
		}
		inWindow = append(inWindow, audit.Archived{ID: r.ID, Date: r.Date})
		ids = append(ids, r.ID)
	}
	ledger, err := st.AuditLedger(ctx, repo, ids)
	if err != nil {
		return audit.ArchiveResult{}, err
	}
	ingested, err := st.LedgerRunsCreated(ctx, repo, f.Since, until)
	if err != nil {
		return audit.ArchiveResult{}, err
	}
	return audit.AuditArchive(url, repo, inWindow, ledger, ingested, func(id int64) bool { return held[id] }, purged), nil
}

// auditStore is the ledger the archive audit reads.
type auditStore interface {
	AuditLedger(ctx context.Context, repo string, runs []int64) ([]audit.Ingest, error)
	LedgerRunsCreated(ctx context.Context, repo string, since, until time.Time) ([]audit.LedgerRun, error)
}

// archiveAuditText renders the archive comparison for the console.
func archiveAuditText(r audit.ArchiveResult, target string) string {
	var b strings.Builder
	never, missing := 0, 0
	for _, f := range r.Findings {
		switch f.Cause {
		case audit.CauseNeverIngested:
			never++
		case audit.CauseNotArchived:
			missing++
		}
	}
	fmt.Fprintf(&b, "\nArchive %s against the %s ledger: %d runs in the window, %d ingested, %d never ingested; %d ingested runs missing from the archive\n",
		r.URL, target, r.InArchive, r.Ingested, never, missing)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\nrun %d (%s): %s", f.RunID, f.Date.UTC().Format("2006-01-02"), f.Cause)
		if f.Detail != "" {
			fmt.Fprintf(&b, " — %s", f.Detail)
		}
		b.WriteString("\n")
		if f.Command != "" {
			fmt.Fprintf(&b, "  recover: %s\n", f.Command)
		}
	}
	return b.String()
}

// auditText renders an audit for the console.
// archive is the URL of the archive compared too ("" when none).
func auditText(res audit.Result, repo, workflow, branch, target, archive string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Audit of %s %s on %s against the %s ledger: %d merged sweeps, %d ingested, %d without a successful ingest\n",
		repo, workflow, branch, target, res.Runs, res.Ingested, len(res.Missed))
	if n := len(res.Rejected); n > 0 {
		fmt.Fprintf(&b, "Run listing entries not audited (not a run as served): %d\n", n)
	}
	if cl := res.Changelog; cl != nil && !cl.Found {
		fmt.Fprintf(&b, "No %s on %s: changelog entries not audited\n", cl.Path, branch)
	} else if cl != nil {
		fmt.Fprintf(&b, "Changelog %s on %s: %d entries merged in the window, %d covered by a run, %d without a run\n",
			cl.Path, branch, cl.Entries, cl.Covered, cl.Entries-cl.Covered)
	}
	for _, r := range res.Rejected {
		id := r.ID
		if id == "" {
			id = "(none)"
		}
		fmt.Fprintf(&b, "\nlisting entry with id %s: rejected — %s\n  not audited: check the run on GitHub\n", id, r.Reason)
	}
	for _, f := range res.Missed {
		if f.RunID == 0 {
			fmt.Fprintf(&b, "\nchangelog entry of PR #%d (merged %s, %s): %s — %s\n  no recovery command: there is no run to ingest\n",
				f.PR, f.CreatedAt.UTC().Format("2006-01-02 15:04"), strings.Join(f.ConfigKeys, ", "), f.Cause, f.Detail)
			continue
		}
		run := fmt.Sprintf("run %d attempt %d (%s, %s)", f.RunID, f.Attempt, f.CreatedAt.UTC().Format("2006-01-02 15:04"), f.Conclusion)
		if f.SourceRunID != 0 {
			run += fmt.Sprintf(", sweep %d", f.SourceRunID)
		}
		fmt.Fprintf(&b, "\n%s: %s", run, f.Cause)
		if f.Detail != "" {
			fmt.Fprintf(&b, " — %s", f.Detail)
		}
		b.WriteString("\n")
		switch {
		case f.Command != "":
			fmt.Fprintf(&b, "  recover: %s\n", f.Command)
		case f.Cause == audit.CausePurged:
			b.WriteString("  not proposed: purged on purpose\n")
		case f.Cause == audit.CauseInProgress:
			b.WriteString("  not proposed: audit again once it has finished\n")
		case f.Cause == audit.CauseExpired && archive != "":
			fmt.Fprintf(&b, "  not recoverable from GitHub nor from the archive %s\n", archive)
		default:
			b.WriteString("  not recoverable from GitHub\n")
		}
	}
	return b.String()
}

// mergedEntries are the changelog's entries whose pull request (its
// pr-link to this repository) merged in the filter's window, in file
// order. The file grows at its end as PRs merge, so it is read from the
// end back to the first entry whose PR merged before the window; each PR
// is read once (GET pulls/N: merged_at, merge_commit_sha). Entries
// without such a link, or whose PR is not merged, are skipped.
func mergedEntries(ctx context.Context, client *github.Client, path string, data []byte, f github.RunFilter) ([]audit.MergedEntry, error) {
	all, err := audit.ParseChangelog(data)
	if err != nil {
		return nil, fmt.Errorf("changelog %s: %v", path, err)
	}
	prs := map[int]github.PullRequest{}
	var out []audit.MergedEntry
	for i := len(all) - 1; i >= 0; i-- {
		n := client.PRFromLink(all[i].PRLink)
		if n == 0 {
			continue
		}
		pr, ok := prs[n]
		if !ok {
			if pr, err = client.GetPullRequest(ctx, n); err != nil {
				return nil, fmt.Errorf("changelog %s, entry %d: %w", path, i+1, err)
			}
			prs[n] = pr
		}
		switch {
		case pr.MergedAt.IsZero() || (!f.Until.IsZero() && pr.MergedAt.After(f.Until)):
			continue
		case pr.MergedAt.Before(f.Since):
			slices.Reverse(out)
			return out, nil
		}
		out = append(out, audit.MergedEntry{Entry: all[i], PR: n, MergedAt: pr.MergedAt, MergeCommitSHA: pr.MergeCommitSHA})
	}
	slices.Reverse(out)
	return out, nil
}
