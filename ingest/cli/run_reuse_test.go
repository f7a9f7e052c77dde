package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

const (
	mergeRunID  = 28500000001
	mergeSHA    = "9d8c7b6a5f4e3d2c1b0a99887766554433221100"
	sourcePR    = 2647
	changelogPR = 2707
)

func changelogZip(pr int) []byte {
	return fakegithub.ZipFiles(map[string]string{"changelog_metadata.json": `{"base_ref": "a", "head_ref": "b", "entries": [
  {"config-keys": ["qwen3.5-fp8-b200-sglang"], "description": ["sweep"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/` +
		strconv.Itoa(pr) + `", "evals-only": false, "all-evals": false, "append-only": false}]}`})
}

// reuseFake serves the demo run as the source of a reused sweep (a PR
// run, whose own changelog must be ignored) and a merge run that carries
// the authoritative changelog.
func reuseFake(t *testing.T) *fakegithub.Server {
	t.Helper()
	fake, _ := demoFake(t)
	created := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	fake.AddRun(fakegithub.Run{ID: mergeRunID, Attempt: 3, Name: "Run Sweep", Event: "push", Status: "completed",
		Conclusion: "success", HeadSHA: mergeSHA, HeadBranch: "main", CreatedAt: created, RunStartedAt: created.Add(time.Minute)})
	fake.AddArtifact(fakegithub.Artifact{ID: 5000000001, RunID: demoRunID, Name: "changelog-metadata", CreatedAt: created.Add(-48 * time.Hour), Data: changelogZip(1)})
	fake.AddArtifact(fakegithub.Artifact{ID: 5000000002, RunID: mergeRunID, Name: "changelog-metadata", CreatedAt: created.Add(2 * time.Minute), Data: changelogZip(changelogPR)})
	fake.AddArtifact(fakegithub.Artifact{ID: 5000000003, RunID: mergeRunID, Name: "changelog-metadata", CreatedAt: created.Add(time.Minute), Data: changelogZip(3)})
	return fake
}

// TestRunReused: a reused sweep takes its changelog from the merge run,
// records the merge run in the config, writes reuse_source_run.json, and
// comments on the source PR.
func TestRunReused(t *testing.T) {
	t.Parallel()
	fake := reuseFake(t)
	fake.AddRun(fakegithub.Run{ID: demoRunID, Attempt: 2, Name: "Run Sweep", Event: "pull_request", Status: "completed",
		Conclusion: "success", HeadSHA: demoHeadSHA, HeadBranch: "feature", PullRequests: []int{sourcePR},
		CreatedAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)})
	db := pgtest.New(t)
	cache := t.TempDir()
	r := run(t, runVars(fake, db, cache), "run", "--run-id", "28485856738", "--merge-run-id", "28500000001", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.JSONEq(t, `{"repo":"SemiAnalysisAI/InferenceX","sourceRunId":28485856738,"sourceRunAttempt":2,"mergeRunId":28500000001,"mergeRunAttempt":3}`,
		string(jsonField(t, r.stdout, "run")))
	require.Contains(t, r.stderr, "report posted on pull request #2647 (found by reuse metadata)")
	// The reuse metadata folder and the changelog are no failures: only
	// the demo's designed malformed benchmark file and telemetry file are.
	var failures []map[string]any
	require.NoError(t, json.Unmarshal(jsonField(t, r.stdout, "failures"), &failures))
	require.Len(t, failures, 2, r.stdout)
	for _, f := range failures {
		require.Contains(t, []any{"benchmark", "power"}, f["category"], "unexpected failure %v", f)
	}
	require.JSONEq(t, `{"new":12,"duplicate":0,"skipped":12,"unmapped":2,"failed":1}`, string(jsonField(t, string(jsonField(t, r.stdout, "rows")), "benchmark")))
	require.Len(t, reportComments(fake, sourcePR), 1)

	tree := filepath.Join(cache, "SemiAnalysisAI", "InferenceX", "runs", "28485856738-merge-28500000001")
	meta, err := os.ReadFile(filepath.Join(tree, "reused-ingest-metadata", "reuse_source_run.json"))
	require.NoError(t, err)
	require.Equal(t, `{
  "source_run_id": "28485856738",
  "source_run_attempt": 2,
  "source_run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/28485856738",
  "source_pr_number": 2647,
  "source_head_sha": "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a46",
  "ingest_run_id": "28500000001",
  "ingest_run_attempt": 3,
  "ingest_run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/28500000001"
}
`, string(meta))
	// The changelog in the tree is the merge run's newest copy.
	cl, err := os.ReadFile(filepath.Join(tree, "changelog-metadata.zip"))
	require.NoError(t, err)
	require.Equal(t, changelogZip(changelogPR), cl)
	listing, err := os.ReadFile(filepath.Join(tree, "artifacts.json"))
	require.NoError(t, err)
	require.Contains(t, string(listing), `"id": 5000000002`)
	require.NotContains(t, string(listing), `"id": 5000000001`)
	// The run's date is the merge run's.
	require.Contains(t, string(listing), `"created_at": "2026-11-21T09:00:00Z"`)

	// In the database: the rows under the source run and attempt, dated by
	// the merge run; the changelog under the merge run's metadata.
	require.Equal(t, "28485856738/2/2026-11-21", queryText(t, db,
		`SELECT string_agg(github_run_id || '/' || run_attempt || '/' || date, ',') FROM workflow_runs`), "one workflow run: the source's")
	require.Equal(t, "0", queryText(t, db, `SELECT count(*) FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id
		WHERE (w.github_run_id, w.run_attempt) <> (28485856738, 2)`))
	require.Equal(t, "12", queryText(t, db, `SELECT count(*) FROM benchmark_results`))
	require.Equal(t, "0", queryText(t, db, `SELECT count(*) FROM eval_results e JOIN workflow_runs w ON w.id = e.workflow_run_id
		WHERE (w.github_run_id, w.run_attempt) <> (28485856738, 2)`))
	require.NotEqual(t, "0", queryText(t, db, `SELECT count(*) FROM eval_results`))
	require.Equal(t, "28500000001/3/https://github.com/SemiAnalysisAI/InferenceX/actions/runs/28500000001/https://github.com/SemiAnalysisAI/InferenceX/pull/2707", queryText(t, db,
		`SELECT string_agg(merge_run_id || '/' || merge_run_attempt || '/' || merge_run_url || '/' || pr_link, ',') FROM changelog_entries`),
		"the changelog is the merge run's, not the source run's")
}

// queryText runs a query that returns one text value.
func queryText(t *testing.T, db, query string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var s string
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT ("+query+")::text").Scan(&s))
	return s
}

// TestRunChangelogPRLink: without reuse metadata or run PRs, the changelog's
// pr-link names the pull request.
func TestRunChangelogPRLink(t *testing.T) {
	t.Parallel()
	fake := reuseFake(t)
	r := run(t, runVars(fake, pgtest.New(t), t.TempDir()), "run", "--run-id", "28485856738", "--merge-run-id", "28500000001")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stderr, "report posted on pull request #2707 (found by changelog pr-link)")
}

// TestRunFailsBeforeWriting: selection failures and download faults end
// with a message saying what failed; nothing but the ledger row recording
// the aborted attempt (run id, attempt, reason) reaches the database.
func TestRunFailsBeforeWriting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(f *fakegithub.Server)
		args    []string
		wantErr string
		// wantAttempt is the attempt the ledger row records: GitHub's
		// current one, or the one asked for.
		wantAttempt int
	}{
		{name: "merge run has no changelog", setup: func(f *fakegithub.Server) { f.RemoveArtifacts(mergeRunID, "changelog-metadata") },
			args:    []string{"--merge-run-id", "28500000001"},
			wantErr: "ingest: aborted: fetch run 28485856738: no unexpired changelog-metadata artifact found on merge run 28500000001", wantAttempt: 2},
		{name: "merge changelog expired", setup: func(f *fakegithub.Server) { f.SetExpired(mergeRunID, "changelog-metadata", true) },
			args:    []string{"--merge-run-id", "28500000001"},
			wantErr: "ingest: aborted: fetch run 28485856738: no unexpired changelog-metadata artifact found on merge run 28500000001", wantAttempt: 2},
		{name: "source artifacts all expired", setup: func(f *fakegithub.Server) { f.SetExpired(demoRunID, "", true) },
			args:    []string{"--merge-run-id", "28500000001"},
			wantErr: "ingest: aborted: fetch run 28485856738: no unexpired artifacts found on source run 28485856738 ({n} listed, {n} expired)", wantAttempt: 2},
		{name: "artifact gone from blob storage", setup: func(f *fakegithub.Server) {
			f.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: "results_bmk", Kind: fakegithub.Status, Status: 404})
		}, wantErr: "ingest: aborted: fetch run 28485856738: artifact results_bmk (id {n}): download: blob storage http://127.0.0.1:", wantAttempt: 2},
		{name: "unknown merge run", args: []string{"--merge-run-id", "42"},
			wantErr: "ingest: aborted: fetch run 28485856738: merge run: run 42: get run: GET ", wantAttempt: 2},
		{name: "attempt is not the current one", args: []string{"--attempt", "1"},
			wantErr: "ingest: aborted: fetch run 28485856738: source run 28485856738: GitHub reports attempt 2, not the requested attempt 1", wantAttempt: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := reuseFake(t)
			if tt.setup != nil {
				tt.setup(fake)
			}
			db := pgtest.New(t)
			vars := runVars(fake, db, t.TempDir())
			r := runCtx(t.Context(), vars, append([]string{"run", "--run-id", "28485856738"}, tt.args...)...)
			requireCode(t, cli.ExitAborted, r)
			// {n} stands for a number that depends on the demo run's size.
			require.Regexp(t, strings.ReplaceAll(regexp.QuoteMeta(tt.wantErr), `\{n\}`, `\d+`), r.stderr)
			for _, table := range []string{"workflow_runs", "benchmark_results", "run_stats", "configs"} {
				require.Zero(t, count(t, db, table), "rows in %s", table)
			}
			row := newestLedgerRow(t, db, 28485856738)
			require.Equal(t, "aborted", row.status)
			require.Equal(t, tt.wantAttempt, row.attempt)
			require.Equal(t, strings.TrimPrefix(strings.SplitN(r.stderr[strings.Index(r.stderr, "ingest: aborted: "):], "\n", 2)[0], "ingest: aborted: "), row.reason)
			require.EqualValues(t, 1, count(t, db, "ingests"))
			require.Empty(t, reportComments(fake, demoPR))
			requireNoSecret(t, []string{r.stdout, r.stderr})
		})
	}
}

// TestRunUsage: command-line errors are found before any request.
func TestRunUsage(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	tests := []struct {
		name    string
		args    []string
		drop    string
		wantErr string
	}{
		{"no run id", nil, "", "ingest run: --run-id (or INGEST_RUN_ID) is required"},
		{"no token", []string{"--run-id", "1"}, "GITHUB_TOKEN", "ingest run: GITHUB_TOKEN is required"},
		{"bad repo", []string{"--run-id", "1", "--repo", "nope"}, "", `ingest run: invalid value "nope" for --repo: want OWNER/NAME`},
		{"bad merge id", []string{"--run-id", "1", "--merge-run-id", "x"}, "", `ingest run: invalid value "x" for --merge-run-id: want a positive integer`},
		{"bad base url", []string{"--run-id", "1", "--base-url", "ftp://x"}, "", `ingest run: GitHub API base URL "ftp://x" is not an http(s) URL`},
		{"bad parallel", []string{"--run-id", "1", "--parallel", "0"}, "", `ingest run: invalid value "0" for --parallel: want an integer from 1 to 64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := runVars(fake, unreachableURL, t.TempDir())
			delete(vars, tt.drop)
			r := run(t, vars, append([]string{"run"}, tt.args...)...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, tt.wantErr)
		})
	}
	require.Zero(t, fake.Count(fakegithub.RouteRun))
}
