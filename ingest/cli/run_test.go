package cli_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

var updateRun = flag.Bool("update-run", false, "rewrite the golden PR comments of the run tests")

// requireGolden compares got with testdata/name, or rewrites it.
func requireGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateRun {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: go test ./ingest/cli -run TestRun -update-run")
	require.Equal(t, string(want), got)
}

// TestRunEndToEnd: fake GitHub serving the demo run → ingest run → the
// database holds exactly what ingest load writes from the same tree, and
// the PR carries one report comment. A second run edits that comment.
func TestRunEndToEnd(t *testing.T) {
	t.Parallel()
	fake, demoDir := demoFake(t)
	db := pgtest.New(t)
	cache := t.TempDir()
	vars := runVars(fake, db, cache)

	first := run(t, vars, "run", "--run-id", "28485856738", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, first) // the demo's designed malformed file
	require.Contains(t, first.stderr, "report posted on pull request #2712 (found by changelog pr-link)")
	require.JSONEq(t, `{"new":12,"duplicate":0,"skipped":12,"unmapped":2,"failed":1}`, string(jsonField(t, string(jsonField(t, first.stdout, "rows")), "benchmark")))

	loaded := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", demoDir, "--database-url", loaded, "--target", "production"))
	require.Equal(t, dumpTables(t, loaded), dumpTables(t, db), "ingest run and ingest load wrote different rows")

	comments := reportComments(fake, demoPR)
	require.Len(t, comments, 1)
	requireGolden(t, "run_demo_comment_first.md", comments[0].Body)
	require.Len(t, fake.Comments(demoPR), 121)

	second := run(t, vars, "run", "--run-id", "28485856738")
	requireCode(t, cli.ExitCompletedWithFailures, second)
	require.Contains(t, second.stderr, "report edited on pull request #2712")
	again := reportComments(fake, demoPR)
	require.Len(t, again, 1, "no second report comment")
	require.Equal(t, comments[0].ID, again[0].ID)
	require.Contains(t, again[0].Body, "| benchmark | 0   | 12        |")
	requireGolden(t, "run_demo_comment_rerun.md", again[0].Body)
	require.Equal(t, dumpTables(t, loaded), dumpTables(t, db), "the rerun changed nothing")
	require.Equal(t, demoArtifacts(t, demoDir), fake.Count(fakegithub.RouteBlob), "the rerun downloaded nothing")

	// ingest load on the cached tree reproduces the ingest.
	trees, err := filepath.Glob(filepath.Join(cache, "SemiAnalysisAI", "InferenceX", "runs", "*"))
	require.NoError(t, err)
	require.Len(t, trees, 1)
	fromCache := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", trees[0], "--database-url", fromCache))
	require.Equal(t, dumpTables(t, loaded), dumpTables(t, fromCache))

	requireNoSecret(t, []string{first.stdout, first.stderr, second.stdout, second.stderr, comments[0].Body, again[0].Body}, cache)
	require.Empty(t, fake.BadAuthHeaders())
	require.Zero(t, fake.BlobAuthAttempts())
}

// TestRunNoCommentAndDryRun print the body instead of posting it.
func TestRunNoCommentAndDryRun(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	db := pgtest.New(t)
	vars := runVars(fake, db, t.TempDir())

	r := run(t, vars, "run", "--run-id", "28485856738", "--no-comment")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stdout, "--- PR comment (not posted) ---\n<!-- ingest-report source-run=28485856738 -->\n")
	require.Empty(t, reportComments(fake, demoPR))
	require.EqualValues(t, 12, count(t, db, "benchmark_results"))

	dry := pgtest.New(t)
	vars["DATABASE_URL"] = dry
	r = run(t, vars, "run", "--run-id", "28485856738", "--dry-run", "--format", "md")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.True(t, strings.HasPrefix(r.stdout, "<!-- ingest-report source-run=28485856738 -->\n> [!CAUTION]\n> Ingest report — 🔎 Dry run"), r.stdout)
	require.NotContains(t, r.stdout, "--- PR comment")
	require.Empty(t, reportComments(fake, demoPR))
	require.Zero(t, count(t, dry, "benchmark_results"))
	require.Zero(t, fake.Count(fakegithub.RouteCreateComment)+fake.Count(fakegithub.RouteListComments))
}

// TestRunInActions: in GitHub Actions the report also goes to the job
// summary, and failures and unmapped values become annotations.
func TestRunInActions(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	vars := runVars(fake, pgtest.New(t), t.TempDir())
	summary := filepath.Join(t.TempDir(), "summary.md")
	vars["GITHUB_ACTIONS"] = "true"
	vars["CI"] = "true"
	vars["GITHUB_STEP_SUMMARY"] = summary
	vars["GITHUB_SERVER_URL"] = "https://github.com"
	vars["GITHUB_REPOSITORY"] = "SemiAnalysisAI/InferenceX-app"
	vars["GITHUB_RUN_ID"] = "31000000000"
	r := run(t, vars, "run", "--run-id", "28485856738")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stderr, "::error title=Ingest failure (benchmark)::bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1024_b200-dgxc_09_recipe-341408ee19f26bfd / agg_")
	require.Contains(t, r.stderr, "::warning title=Unmapped hardware::hardware \"a100-lab\" is not in the alias tables: its rows were not written\n")
	// Logs are JSON lines in CI.
	require.Contains(t, r.stderr, `"msg":"artifacts ready"`)
	got, err := os.ReadFile(summary)
	require.NoError(t, err)
	comments := reportComments(fake, demoPR)
	require.Len(t, comments, 1)
	// The job summary is the comment with longer lists: the same first
	// screen, and every line the comment has that is no capped list's.
	commentHead, _, _ := strings.Cut(comments[0].Body, "\n| Category")
	summaryHead, _, _ := strings.Cut(string(got), "\n| Category")
	require.Equal(t, commentHead, summaryHead)
	for _, line := range strings.Split(comments[0].Body, "\n") {
		if !strings.Contains(line, "(full list: ") {
			require.Contains(t, string(got), line)
		}
	}
	require.Contains(t, comments[0].Body, "[Ingest workflow](https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/31000000000)")
	requireNoSecret(t, []string{r.stdout, r.stderr, string(got)})
}

// TestRunCommentRefused: the run is written, the comment is refused (the
// token lacks pull-requests: write): exit 3, the body on stdout, the
// reason on stderr.
func TestRunCommentRefused(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteCreateComment, Kind: fakegithub.Status, Status: 403, Message: "Resource not accessible by integration"})
	db := pgtest.New(t)
	r := run(t, runVars(fake, db, t.TempDir()), "run", "--run-id", "28485856738", "--pr", "5")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stderr, "ingest: pull request #5: post the report comment: POST ")
	require.Contains(t, r.stderr, "403 Resource not accessible by integration")
	require.Contains(t, r.stdout, "--- PR comment (not posted) ---\n<!-- ingest-report source-run=28485856738 -->")
	require.EqualValues(t, 12, count(t, db, "benchmark_results"))
	requireNoSecret(t, []string{r.stdout, r.stderr})
}

// TestRunTookCoversTheDownload: the report of `ingest run` times the
// whole command: its start (started_at, from which "took" counts) comes
// before the first request to GitHub, so the download is inside it.
func TestRunTookCoversTheDownload(t *testing.T) {
	t.Parallel()
	fake, _ := demoFake(t)
	vars := runVars(fake, pgtest.New(t), t.TempDir())
	var first atomic.Pointer[time.Time]
	api := fake.API.Config.Handler
	fake.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		first.CompareAndSwap(nil, &now)
		api.ServeHTTP(w, r)
	})

	r := run(t, vars, "run", "--run-id", "28485856738", "--dry-run", "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	var started time.Time
	require.NoError(t, json.Unmarshal(jsonField(t, r.stdout, "startedAt"), &started))
	require.NotNil(t, first.Load())
	require.False(t, started.After(*first.Load()), "started_at %s is after the first GitHub request %s", started, *first.Load())
}
