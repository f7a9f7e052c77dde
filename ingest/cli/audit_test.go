package cli_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/audit"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// auditOutcome is `ingest audit --format json`.
type auditOutcome struct {
	Target string `json:"target"`
	audit.Result
}

// TestAuditFindsMissedSweeps: fake GitHub serves the sweep workflow's runs
// on main since a date (others: another branch, another workflow, before
// the date); the ledger holds one successful ingest and two aborted ones.
// The audit names every merged sweep without a successful ingest with its
// cause and the command that recovers it — never for a purged run or one
// whose artifacts expired — through a rate limit on the listing and one
// on an artifact listing.
func TestAuditFindsMissedSweeps(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	day := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	const (
		ingested  = 28500000001
		noIngest  = 28500000002
		expired   = 28500000003
		failed    = 28500000004
		cancelled = 28500000005
		aborted   = 28500000006
		purged    = 28500000007
		otherBr   = 28500000008
		before    = 28500000009
		otherWf   = 28500000010
		sweep     = 28499999999 // the PR sweep run `aborted` reused
	)
	add := func(id int64, conclusion, branch, path string, at time.Time, artifacts int, allExpired bool) {
		fake.AddRun(fakegithub.Run{ID: id, Attempt: 1, Name: "Run Sweep", Event: "push", Status: "completed", Conclusion: conclusion,
			HeadBranch: branch, HeadSHA: "abc", CreatedAt: at, RunStartedAt: at, Path: path})
		for i := range artifacts {
			fake.AddArtifact(fakegithub.Artifact{ID: id*10 + int64(i), RunID: id, Name: "bmk_" + string(rune('a'+i)), CreatedAt: at,
				Expired: allExpired, Data: []byte("PK")})
		}
	}
	sweepWf := ".github/workflows/run-sweep.yml"
	add(ingested, "success", "main", sweepWf, day, 1, false)
	add(noIngest, "success", "main", sweepWf, day.Add(1*time.Hour), 2, false)
	add(expired, "success", "main", sweepWf, day.Add(2*time.Hour), 2, true)
	add(failed, "failure", "main", sweepWf, day.Add(3*time.Hour), 1, false)
	add(cancelled, "cancelled", "main", sweepWf, day.Add(4*time.Hour), 1, false)
	add(aborted, "success", "main", sweepWf, day.Add(5*time.Hour), 1, false)
	add(purged, "success", "main", sweepWf, day.Add(6*time.Hour), 1, false)
	add(otherBr, "success", "feature", sweepWf, day.Add(7*time.Hour), 1, false)
	add(before, "success", "main", sweepWf, day.AddDate(0, 0, -10), 1, false)
	add(otherWf, "success", "main", ".github/workflows/e2e.yml", day.Add(8*time.Hour), 1, false)
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteListWorkflowRuns, Kind: fakegithub.TooManyRequests, Times: 1})
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.SecondaryRateLimit, Times: 1})

	db := pgtest.New(t)
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: ingested})
	requireCode(t, cli.ExitOK, run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}, "load", tree))
	st, err := store.Open(t.Context(), db, zap.NewNop())
	require.NoError(t, err)
	for _, cause := range []string{"fetch run 28499999999: artifact bmk_x: download timed out", "fetch run 28499999999: HTTP 502"} {
		start := schema.RunStart{Run: schema.RunIdentity{Repo: runTestRepo, SourceRunID: sweep, SourceRunAttempt: 1, MergeRunID: aborted, MergeRunAttempt: 1},
			Target: "production", StartedAt: time.Now()}
		_, err := st.RecordAborted(t.Context(), start, &schema.Summary{Status: schema.StatusAborted, FinishedAt: time.Now()}, nil, errors.New(cause))
		require.NoError(t, err)
	}
	st.Close()
	ov := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ov, []byte(`{"purgedRuns":[{"runId":28500000007,"reason":"wrong cluster firmware"}]}`), 0o644))

	vars := map[string]string{"DATABASE_URL": db, "GITHUB_TOKEN": runTestToken, "GITHUB_API_URL": fake.BaseURL(),
		"INGEST_CACHE_DIR": t.TempDir(), "INGEST_OVERRIDES": ov}
	r := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	var out auditOutcome
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	require.Equal(t, "production", out.Target)
	require.Equal(t, &audit.Changelog{Path: "perf-changelog.yaml"}, out.Changelog, "the repository has no changelog file")
	require.Equal(t, 1, fake.Hits(fakegithub.RouteListWorkflowRuns), "the rate-limited listing was retried")
	require.Equal(t, 1, fake.Hits(fakegithub.RouteArtifacts), "the rate-limited artifact listing was retried")
	require.Equal(t, 7, out.Runs, "the sweep workflow's runs on main since the date")
	require.Equal(t, 1, out.Ingested)
	type row struct {
		run, source    int64
		cause, command string
	}
	var got []row
	for _, f := range out.Missed {
		got = append(got, row{f.RunID, f.SourceRunID, f.Cause, f.Command})
	}
	cmd := "ingest run --repo " + runTestRepo + " --run-id "
	require.Equal(t, []row{
		{noIngest, 0, audit.CauseNoIngest, cmd + "28500000002"},
		{expired, 0, audit.CauseExpired, ""},
		{failed, 0, audit.CauseRunFailed, cmd + "28500000004"},
		{cancelled, 0, audit.CauseRunCancelled, cmd + "28500000005"},
		{aborted, sweep, audit.CauseAborted, cmd + "28499999999 --merge-run-id 28500000006"},
		{purged, 0, audit.CausePurged, ""},
	}, got)
	require.Equal(t, "2 times, the last: fetch run 28499999999: HTTP 502", out.Missed[4].Detail)
	require.Equal(t, "wrong cluster firmware", out.Missed[5].Detail)

	text := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01")
	requireCode(t, cli.ExitCompletedWithFailures, text)
	require.Contains(t, text.stdout, "7 merged sweeps, 1 ingested, 6 without a successful ingest\nNo perf-changelog.yaml on main: changelog entries not audited\n")
	require.Contains(t, text.stdout, "run 28500000006 attempt 1 (2026-08-03 15:00, success), sweep 28499999999: ingest aborted — 2 times")
	require.Contains(t, text.stdout, "  recover: "+cmd+"28499999999 --merge-run-id 28500000006\n")
	require.Contains(t, text.stdout, "run 28500000007 attempt 1 (2026-08-03 16:00, success): purged on purpose — wrong cluster firmware\n  not proposed: purged on purpose\n")
	require.Contains(t, text.stdout, "artifacts expired — all 2 artifacts have expired: nothing left to ingest\n  not recoverable from GitHub\n")

	// With an archive compared too, the expired run is recoverable from it
	// when it holds the run, and said to be in neither place otherwise.
	mirror := writeArchive(t, []archivedRun{{id: expired, date: "2026-08-03"}})
	withArchive := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--archive", mirror)
	requireCode(t, cli.ExitCompletedWithFailures, withArchive)
	require.Contains(t, withArchive.stdout, "artifacts expired — all 2 artifacts have expired on GitHub; the archive "+mirror+" holds the run\n"+
		"  recover: ingest run --repo "+runTestRepo+" --run-id 28500000003 --source archive --archive "+mirror+"\n")
	require.NotContains(t, withArchive.stdout, "not recoverable from GitHub")
	empty := t.TempDir()
	without := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--archive", empty)
	requireCode(t, cli.ExitCompletedWithFailures, without)
	require.Contains(t, without.stdout, "all 2 artifacts have expired: nothing left to ingest; the archive "+empty+" does not hold the run\n"+
		"  not recoverable from GitHub nor from the archive "+empty+"\n")
	requireNoSecret(t, []string{text.stdout, text.stderr, r.stderr})

	// Only the ingested run in the window: nothing missed, exit 0.
	clean := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-03T09:00:00Z", "--until", "2026-08-03T10:30:00Z")
	requireCode(t, cli.ExitOK, clean)
	require.Contains(t, clean.stdout, "1 merged sweeps, 1 ingested, 0 without a successful ingest")

	requireCode(t, cli.ExitUsage, run(t, vars, "audit", "--repo", runTestRepo))
	requireCode(t, cli.ExitUsage, run(t, vars, "audit", "--since", "2026-08-01", "--repo", "nope"))
}

// TestAuditChangelogEntries: the changelog on main has an entry whose PR
// merged before the window, three merged in it (their merge commits: a run
// that was ingested, a run that failed, no run at all) and one with a link
// to another repository. The entry without a run is listed with cause
// "no run" and no command, the failed run under its own cause, the
// ingested one not at all; the PRs are read once each, the one before the
// window ends the reading.
func TestAuditChangelogEntries(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	day := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	const (
		ingested = 28600000001
		failed   = 28600000002
	)
	for _, r := range []struct {
		id         int64
		conclusion string
		sha        string
		at         time.Time
	}{{ingested, "success", "sha-ingested", day}, {failed, "failure", "sha-failed", day.Add(time.Hour)}} {
		fake.AddRun(fakegithub.Run{ID: r.id, Attempt: 1, Name: "Run Sweep", Event: "push", Status: "completed", Conclusion: r.conclusion,
			HeadBranch: "main", HeadSHA: r.sha, CreatedAt: r.at, RunStartedAt: r.at, Path: ".github/workflows/run-sweep.yml"})
		fake.AddArtifact(fakegithub.Artifact{ID: r.id * 10, RunID: r.id, Name: "bmk_a", CreatedAt: r.at, Data: []byte("PK")})
	}
	link := "https://github.com/" + runTestRepo + "/pull/"
	fake.SetFile("main", "perf-changelog.yaml", []byte(`- config-keys:
    - dsr1-fp8-h200-sglang
  description:
    - "before the window"
  pr-link: `+link+`100

- config-keys:
    - dsr1-fp8-b200-trt
  description:
    - "ingested"
  pr-link: `+link+`101

- config-keys:
    - gptoss-fp4-b200-vllm
  description: "failed run"
  pr-link: `+link+`102

- config-keys:
    - dsr1-fp4-mi355x-sglang
    - dsr1-fp8-mi355x-sglang
  description:
    - "merged, never swept"
  pr-link: `+link+`103

- config-keys:
    - other
  description:
    - "a PR elsewhere"
  pr-link: https://github.com/other/repo/pull/5
`))
	fake.AddPull(fakegithub.Pull{Number: 100, MergeCommitSHA: "sha-old", MergedAt: day.AddDate(0, 0, -10)})
	fake.AddPull(fakegithub.Pull{Number: 101, MergeCommitSHA: "sha-ingested", MergedAt: day.Add(-time.Minute)})
	fake.AddPull(fakegithub.Pull{Number: 102, MergeCommitSHA: "sha-failed", MergedAt: day.Add(59 * time.Minute)})
	fake.AddPull(fakegithub.Pull{Number: 103, MergeCommitSHA: "sha-none", MergedAt: day.Add(2 * time.Hour)})

	db := pgtest.New(t)
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: ingested})
	requireCode(t, cli.ExitOK, run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo}, "load", tree))

	vars := map[string]string{"DATABASE_URL": db, "GITHUB_TOKEN": runTestToken, "GITHUB_API_URL": fake.BaseURL(), "INGEST_CACHE_DIR": t.TempDir()}
	r := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	var out auditOutcome
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	require.Equal(t, 2, out.Runs)
	require.Equal(t, 1, out.Ingested)
	require.Equal(t, &audit.Changelog{Path: "perf-changelog.yaml", Found: true, Entries: 3, Covered: 2}, out.Changelog)
	require.Len(t, out.Missed, 2, "%s", r.stdout)
	require.Equal(t, int64(failed), out.Missed[0].RunID)
	require.Equal(t, audit.CauseRunFailed, out.Missed[0].Cause)
	require.Equal(t, audit.Finding{CreatedAt: day.Add(2 * time.Hour), PR: 103, ConfigKeys: []string{"dsr1-fp4-mi355x-sglang", "dsr1-fp8-mi355x-sglang"},
		MergeCommitSHA: "sha-none", Cause: audit.CauseNoRun, Detail: "no completed run of the sweep workflow has head sha sha-none"}, out.Missed[1])
	require.Equal(t, 4, fake.Count(fakegithub.RoutePull), "PRs 103, 102, 101 and 100 (which ends the reading), once each")

	text := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01")
	requireCode(t, cli.ExitCompletedWithFailures, text)
	require.Contains(t, text.stdout, "2 merged sweeps, 1 ingested, 2 without a successful ingest\n"+
		"Changelog perf-changelog.yaml on main: 3 entries merged in the window, 2 covered by a run, 1 without a run\n")
	require.Contains(t, text.stdout, "\nchangelog entry of PR #103 (merged 2026-08-03 12:00, dsr1-fp4-mi355x-sglang, dsr1-fp8-mi355x-sglang): no run"+
		" — no completed run of the sweep workflow has head sha sha-none\n  no recovery command: there is no run to ingest\n")

	// The window of the ingested run only: its entry is covered, exit 0.
	clean := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-03T09:00:00Z", "--until", "2026-08-03T10:30:00Z", "--format", "json")
	requireCode(t, cli.ExitOK, clean)
	out = auditOutcome{}
	require.NoError(t, json.Unmarshal([]byte(clean.stdout), &out), "%s", clean)
	require.Equal(t, &audit.Changelog{Path: "perf-changelog.yaml", Found: true, Entries: 1, Covered: 1}, out.Changelog, "PR 101; 102 merged after --until")
}

// TestAuditListingEntries: GitHub's run listing serves entries that are not
// runs (ids -5 and 0, a created_at that does not parse, a completed run
// with an unknown conclusion) beside a run re-run since the filter and now
// in progress, and one good run without an ingest. Each bad entry is
// reported, named by its id with the reason, and proposes no recovery
// command; the in-progress run is shown as in progress, not as a failed
// run; the good run is still audited; the audit exits 3.
func TestAuditListingEntries(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	day := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	const good, rerun = 28600000001, 28600000002
	sweepWf := ".github/workflows/run-sweep.yml"
	add := func(id int64, at time.Time, listed map[string]any) {
		fake.AddRun(fakegithub.Run{ID: id, Attempt: 1, Name: "Run Sweep", Event: "push", Status: "completed", Conclusion: "success",
			HeadBranch: "main", HeadSHA: "abc", CreatedAt: at, RunStartedAt: at, Path: sweepWf, Listed: listed})
		fake.AddArtifact(fakegithub.Artifact{ID: id * 10, RunID: id, Name: "bmk_a", CreatedAt: at, Data: []byte("PK")})
	}
	add(good, day, nil)
	add(rerun, day.Add(time.Hour), map[string]any{"status": "in_progress", "conclusion": nil, "run_attempt": 2})
	add(28600000003, day.Add(2*time.Hour), map[string]any{"id": -5})
	add(28600000004, day.Add(3*time.Hour), map[string]any{"id": 0})
	add(28600000005, day.Add(4*time.Hour), map[string]any{"created_at": "yesterday"})
	add(28600000006, day.Add(5*time.Hour), map[string]any{"conclusion": "exploded"})

	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "GITHUB_TOKEN": runTestToken, "GITHUB_API_URL": fake.BaseURL(),
		"INGEST_CACHE_DIR": t.TempDir()}
	r := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--changelog", "", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	var out auditOutcome
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	require.Equal(t, []audit.Rejected{ // as served: newest first
		{ID: "28600000006", Reason: `completed with conclusion "exploded", not a run conclusion`},
		{ID: "28600000005", Reason: `created_at "yesterday" is not an RFC 3339 time`},
		{ID: "0", Reason: "id 0 is not positive"},
		{ID: "-5", Reason: "id -5 is not positive"},
	}, out.Rejected)
	require.Equal(t, 2, out.Runs, "the good run and the run in progress")
	require.Len(t, out.Missed, 2)
	cmd := "ingest run --repo " + runTestRepo + " --run-id "
	require.Equal(t, audit.Finding{RunID: good, Attempt: 1, CreatedAt: day, Conclusion: "success", Cause: audit.CauseNoIngest,
		Detail: "no ingest of the run is recorded", Command: cmd + "28600000001"}, out.Missed[0])
	require.Equal(t, audit.Finding{RunID: rerun, Attempt: 2, CreatedAt: day.Add(time.Hour), Cause: audit.CauseInProgress,
		Detail: "status in_progress: not finished, nothing to recover yet"}, out.Missed[1])

	text := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-01", "--changelog", "")
	requireCode(t, cli.ExitCompletedWithFailures, text)
	require.Contains(t, text.stdout, "Run listing entries not audited (not a run as served): 4\n")
	require.Contains(t, text.stdout, "\nlisting entry with id -5: rejected — id -5 is not positive\n  not audited: check the run on GitHub\n")
	require.Contains(t, text.stdout, "\nrun 28600000002 attempt 2 (2026-08-03 11:00, ): in progress — status in_progress")
	require.Contains(t, text.stdout, "  not proposed: audit again once it has finished\n")
	require.NotContains(t, text.stdout, "--run-id -5")
	require.NotContains(t, text.stdout, "--run-id 0")
	require.NotContains(t, text.stdout, "run failed")

	// The run in progress alone is not missed: exit 0.
	only := run(t, vars, "audit", "--repo", runTestRepo, "--since", "2026-08-03T10:30:00Z", "--until", "2026-08-03T11:30:00Z", "--changelog", "")
	requireCode(t, cli.ExitOK, only)
}

// A command run without its required options says so in one line naming
// every missing option with the variable that can give it, before
// anything is read or connected.
func TestRequiredOptionsMissing(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": unreachableURL, "GITHUB_TOKEN": "t"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill"}, "ingest backfill: --repo OWNER/NAME is required (or INGEST_REPO)\n"},
		{[]string{"backfill", "--since", "2026-08-01"}, "ingest backfill: --repo OWNER/NAME is required (or INGEST_REPO)\n"},
		{[]string{"audit"}, "ingest audit: --repo OWNER/NAME and --since DATE are required (or INGEST_REPO and INGEST_AUDIT_SINCE)\n"},
		{[]string{"audit", "--since", "2026-08-01"}, "ingest audit: --repo OWNER/NAME is required (or INGEST_REPO)\n"},
		{[]string{"audit", "--repo", "o/r"}, "ingest audit: --since DATE is required (or INGEST_AUDIT_SINCE)\n"},
	} {
		r := run(t, base, tc.args...)
		requireCode(t, cli.ExitUsage, r)
		require.Equal(t, tc.want, r.stderr, "%v", tc.args)
		require.Empty(t, r.stdout, "%v", tc.args)
	}
}
