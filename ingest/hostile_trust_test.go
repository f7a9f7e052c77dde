package ingest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store"
)

// trustCases is the second hostile round (issue 26): the PR comment, the
// GitHub download path and the schema guard under hostile conditions.
// Every case failed before its fix.
func trustCases() []hCase {
	var cs []hCase
	cs = append(cs, trustDownloadCases()...)
	cs = append(cs, trustListingCases()...)
	cs = append(cs, trustCommentCases()...)
	cs = append(cs, trustSchemaCases()...)
	cs = append(cs, trustUsageCases()...)
	return cs
}

// hGH says how a case runs `ingest run` against the fake GitHub.
type hGH struct {
	// tree edits the generated run before the fake serves it.
	tree func(t *testing.T, dir string)
	// setup breaks the fake (faults, page size, planted comments).
	setup func(f *hFake)
	args  []string
	vars  map[string]string
	// comment posts the report on pull request hPR instead of printing it.
	comment bool
	// cache is the artifact cache (default: a fresh one).
	cache string
	// apiURL turns the fake's base URL into GITHUB_API_URL.
	apiURL func(base string) string
}

// hPR is the pull request the comment cases post on.
const hPR = 7

// hGitHubRunWith is hGitHubRun with the knobs of hGH; the fake is kept in
// c.state["fake"].
func hGitHubRunWith(t *testing.T, c *hCtx, o hGH) hResult {
	t.Helper()
	dir := t.TempDir()
	hGenTree(t, dir)
	if o.tree != nil {
		o.tree(t, dir)
	}
	srv := fakegithub.New(t, hRepo, hToken)
	run, err := srv.LoadTree(dir, 0)
	require.NoError(t, err)
	f := &hFake{srv: srv, runID: run.ID}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "artifacts.json" {
			f.names = append(f.names, strings.TrimSuffix(e.Name(), ".zip"))
		}
	}
	c.state["fake"] = f
	c.state["run"] = run.ID
	if o.setup != nil {
		o.setup(f)
	}
	cache := o.cache
	if cache == "" {
		cache = t.TempDir()
	}
	c.state["cache"] = cache
	vars := map[string]string{"GITHUB_TOKEN": hToken, "GITHUB_API_URL": srv.BaseURL(), "INGEST_CACHE_DIR": cache,
		"DATABASE_URL": c.db, "INGEST_REPO": hRepo}
	if o.apiURL != nil {
		vars["GITHUB_API_URL"] = o.apiURL(srv.BaseURL())
	}
	for k, v := range o.vars {
		vars[k] = v
	}
	args := []string{"run", "--run-id", strconv.FormatInt(run.ID, 10), "--summary-json", c.summary, "--log-level", "warn"}
	if o.comment {
		args = append(args, "--pr", strconv.Itoa(hPR))
	} else {
		args = append(args, "--no-comment")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	return hCLI(ctx, vars, append(args, o.args...)...)
}

func hFakeOf(c *hCtx) *hFake { return c.state["fake"].(*hFake) }

// hNoParts fails when a partial download is left in the case's cache.
func hNoParts(t *testing.T, c *hCtx) {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(c.state["cache"].(string), "*", "*", "artifacts", ".*.part"))
	require.NoError(t, err)
	require.Empty(t, parts, "partial downloads left behind")
}

// hCacheBytes is the size of every file in the case's cache.
func hCacheBytes(t *testing.T, c *hCtx) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.Walk(c.state["cache"].(string), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// hArtifactsRead is details.artifactsRead of the case's summary.
func hArtifactsRead(t *testing.T, c *hCtx) int64 {
	t.Helper()
	require.NotNil(t, c.sum, "no JSON summary")
	return c.sum.Details.ArtifactsRead
}

// hBaseArtifactsRead is what `ingest run` of the untouched generated run
// reads, for the listing cases to compare with.
func hBaseArtifactsRead(t *testing.T, c *hCtx) int64 {
	t.Helper()
	return int64(len(hFakeOf(c).names))
}

func trustDownloadCases() []hCase {
	firstBmk := func(f *hFake) string {
		for _, n := range f.names {
			if strings.HasPrefix(n, "bmk_") {
				return n
			}
		}
		return f.names[0]
	}
	return []hCase{
		{name: "gh-blob-past-listed-size", input: "`ingest run`: a blob streams zeros past its listed size_in_bytes, without end", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: firstBmk(f), Kind: fakegithub.Oversize})
				}})
			}, want: []string{"blob storage sent more than the listed "},
			check: func(t *testing.T, c *hCtx) {
				hNoParts(t, c)
				require.Less(t, hCacheBytes(t, c), int64(20<<20), "the cache holds far more than the run lists")
				require.Equal(t, 1, hFakeOf(c).srv.Hits(fakegithub.RouteBlob), "a blob over its size is not fetched again")
				hAbortRow(t, c, c.state["run"].(int64), "blob storage sent more than the listed ")
			}},
		{name: "gh-download-budget", input: "`ingest run --download-budget 10KB`: the run lists more", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{args: []string{"--download-budget", "10KB"}})
			}, want: []string{"more than the download budget of 10000 bytes (--download-budget)"},
			check: func(t *testing.T, c *hCtx) {
				require.Zero(t, hFakeOf(c).srv.Count(fakegithub.RouteBlob), "downloads started past the budget")
				hAbortRow(t, c, c.state["run"].(int64), "download budget")
			}},
		{name: "gh-download-budget-not-a-size", input: "`ingest run --download-budget lots`", base: baseNone, exit: 2,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{args: []string{"--download-budget", "lots"}})
			}, want: []string{`invalid value "lots" for --download-budget: want a positive size`}},
		{name: "gh-slow-loris", slow: true, input: "`ingest run --fetch-timeout 3s`: a blob sends one byte every 200 ms", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				begin := time.Now()
				r := hGitHubRunWith(t, c, hGH{args: []string{"--fetch-timeout", "3s"}, setup: func(f *hFake) {
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: firstBmk(f), Kind: fakegithub.SlowLoris, Interval: 200 * time.Millisecond})
				}})
				c.state["took"] = time.Since(begin)
				return r
			}, want: []string{"the fetch took longer than 3s (--fetch-timeout)"},
			check: func(t *testing.T, c *hCtx) {
				require.Less(t, c.state["took"].(time.Duration), 30*time.Second)
				hNoParts(t, c)
				hAbortRow(t, c, c.state["run"].(int64), "the fetch took longer than 3s (--fetch-timeout)")
			}},
		{name: "gh-sigkill-leftovers", slow: true, input: "`ingest run` process SIGKILLed mid-download, then run again", base: baseNone, exit: 0,
			exec: hSigkillThenRun,
			check: func(t *testing.T, c *hCtx) {
				require.True(t, c.state["leftover"].(bool), "the killed process left no partial file: the case proves nothing")
				hNoParts(t, c)
			}},
		{name: "gh-expired-after-listing", input: "`ingest run`: one artifact answers 410 between the listing and its download", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					name := f.names[len(f.names)-1]
					c.state["gone"] = name
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Artifact: name, Kind: fakegithub.Status, Status: 410, Message: "Artifact has expired"})
				}})
			}, check: func(t *testing.T, c *hCtx) {
				require.NotNil(t, c.sum)
				require.EqualValues(t, 1, c.sum.Details.ExpiredArtifacts)
				require.Equal(t, hBaseArtifactsRead(t, c)-1, hArtifactsRead(t, c), "the rest was ingested")
				require.Contains(t, strings.Join(c.sum.Notes, "\n"), c.state["gone"].(string))
			}},
		{name: "gh-deleted-after-listing", input: "`ingest run`: one artifact answers 404 between the listing and its download", base: baseNone, exit: 3,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					name := firstBmk(f)
					c.state["gone"] = name
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Artifact: name, Kind: fakegithub.Status, Status: 404})
				}})
			}, check: func(t *testing.T, c *hCtx) {
				require.NotNil(t, c.sum)
				require.EqualValues(t, 1, c.sum.Details.MissingArtifacts)
				require.Equal(t, hBaseArtifactsRead(t, c)-1, hArtifactsRead(t, c), "the rest was ingested")
				require.True(t, hFailure(c.sum, c.state["gone"].(string), "", ""), "the missing artifact is a named failure: %v", c.sum.Failures)
			}},
		{name: "gh-signed-url-expired", input: "`ingest run`: blob storage answers 403 (signed URL expired) once", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: firstBmk(f), Kind: fakegithub.Status, Status: 403,
						Message: "AuthenticationFailed: Signed expiry time has passed", Times: 1})
				}})
			}, check: func(t *testing.T, c *hCtx) {
				f := hFakeOf(c)
				require.Equal(t, len(f.names)+1, f.srv.Count(fakegithub.RouteDownload), "the redirect was asked for again")
				require.Equal(t, hBaseArtifactsRead(t, c), hArtifactsRead(t, c))
			}},
		{name: "gh-credentials-in-api-url", input: "GITHUB_API_URL=http://admin:hunter2@host/, the run endpoint answers 404", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{apiURL: func(base string) string {
					return strings.Replace(base, "http://", "http://admin:hunter2@", 1)
				}, setup: func(f *hFake) {
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteRun, Kind: fakegithub.Status, Status: 404})
				}})
			}, want: []string{"404"}, absent: []string{"hunter2", "admin:"},
			check: func(t *testing.T, c *hCtx) {
				hAbortRow(t, c, c.state["run"].(int64), "404")
				require.Empty(t, hQueryStrings(t, c.db, `SELECT id::text FROM ingests WHERE summary::text LIKE '%hunter2%' OR coalesce(error, '') LIKE '%hunter2%'`))
			}},
		{name: "gh-legal-names", input: "`ingest run`: artifacts named `bench results (retry #2)` and a 252-character bmk_ name", base: baseNone, exit: 3,
			exec: func(t *testing.T, c *hCtx) hResult {
				long := "bmk_" + strings.Repeat("q", 248)
				c.state["long"] = long
				return hGitHubRunWith(t, c, hGH{tree: func(t *testing.T, dir string) {
					src := hGlob(t, dir, "bmk_*")
					require.NoError(t, os.CopyFS(filepath.Join(dir, "bench results (retry #2)"), os.DirFS(src)))
					require.NoError(t, os.CopyFS(filepath.Join(dir, long), os.DirFS(src)))
				}})
			}, want: []string{"bench results (retry #2)", "invalid artifact name"},
			check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hBaseArtifactsRead(t, c)-1, hArtifactsRead(t, c), "all but the refused name were read")
			}},
	}
}

// hSigkillThenRun starts `ingest run` as a process against a blob that
// trickles, kills it with SIGKILL once its partial download exists, then
// runs `ingest run` again (in process) with the same cache.
func hSigkillThenRun(t *testing.T, c *hCtx) hResult {
	t.Helper()
	bin := hBinary(t)
	dir := t.TempDir()
	hGenTree(t, dir)
	srv := fakegithub.New(t, hRepo, hToken)
	run, err := srv.LoadTree(dir, 0)
	require.NoError(t, err)
	bmk := filepath.Base(hGlob(t, dir, "bmk_*"))
	srv.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: strings.TrimSuffix(bmk, ".zip"), Kind: fakegithub.SlowLoris, Interval: 20 * time.Millisecond, Times: 1})
	cache := t.TempDir()
	c.state["cache"] = cache
	cmd := exec.Command(bin, "run", "--run-id", strconv.FormatInt(run.ID, 10), "--no-comment", "--log-level", "warn")
	cmd.Env = []string{"GITHUB_TOKEN=" + hToken, "GITHUB_API_URL=" + srv.BaseURL(), "INGEST_CACHE_DIR=" + cache,
		"DATABASE_URL=" + c.db, "INGEST_REPO=" + hRepo, "PATH=" + os.Getenv("PATH")}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	partGlob := filepath.Join(cache, "*", "*", "artifacts", ".*.part")
	leftover := false
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); {
		if m, _ := filepath.Glob(partGlob); len(m) > 0 {
			// Let it write a few bytes, then kill it outright.
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-exited
			m, _ = filepath.Glob(partGlob)
			leftover = len(m) > 0
			break
		}
		select {
		case <-exited:
			t.Fatalf("the ingest ended before its download: %v", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.state["leftover"] = leftover
	if !leftover {
		_ = cmd.Process.Kill()
		<-exited
	}
	vars := map[string]string{"GITHUB_TOKEN": hToken, "GITHUB_API_URL": srv.BaseURL(), "INGEST_CACHE_DIR": cache, "DATABASE_URL": c.db, "INGEST_REPO": hRepo}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	return hCLI(ctx, vars, "run", "--run-id", strconv.FormatInt(run.ID, 10), "--no-comment", "--summary-json", c.summary, "--log-level", "warn")
}

func trustListingCases() []hCase {
	return []hCase{
		{name: "gh-listing-drift", input: "`ingest run`: an artifact is deleted between listing pages (5 per page)", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					f.srv.MaxPerPage = 5
					// The first name is on page 1: deleting it shifts page 2.
					c.state["deleted"] = f.names[0]
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.DriftAfterPage, Artifact: f.names[0], Times: 1})
				}})
			}, check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hBaseArtifactsRead(t, c)-1, hArtifactsRead(t, c), "an artifact besides the deleted one was lost")
			}},
		{name: "gh-listing-no-link", input: "`ingest run`: listing pages (5 per page) come without a Link header", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					f.srv.MaxPerPage = 5
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.NoLink})
				}})
			}, check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hBaseArtifactsRead(t, c), hArtifactsRead(t, c), "artifacts past the first page were lost")
			}},
		{name: "gh-listing-never-adds-up", input: "`ingest run`: every listing page reports a different total_count", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{setup: func(f *hFake) {
					f.srv.MaxPerPage = 5
					// Each page read deletes another artifact: no reading adds up.
					for _, n := range f.names[:min(len(f.names), 15)] {
						f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.DriftAfterPage, Artifact: n, Times: 1})
					}
				}})
			}, want: []string{"the artifact listing is incomplete after 3 readings"},
			check: func(t *testing.T, c *hCtx) {
				hAbortRow(t, c, c.state["run"].(int64), "the artifact listing is incomplete")
			}},
	}
}

// hPing finds what GitHub would turn into a mention or an issue reference
// in a comment body: code spans and HTML comments are not linked, and a
// backslash does not stop a reference.
var (
	hMention  = regexp.MustCompile(`(^|[^A-Za-z0-9_` + "`" + `])@[A-Za-z0-9]`)
	hIssueRef = regexp.MustCompile(`(^|[^&])#[0-9]|(?i)\bGH-[0-9]`)
	hCode     = regexp.MustCompile("`[^`]*`")
	hHTMLNote = regexp.MustCompile(`(?s)<!--.*?-->`)
)

func hPings(body string) []string {
	body = hHTMLNote.ReplaceAllString(body, "")
	body = strings.ReplaceAll(body, "\\`", "")
	body = hCode.ReplaceAllString(body, "")
	body = strings.ReplaceAll(body, `\`, "")
	return append(hMention.FindAllString(body, -1), hIssueRef.FindAllString(body, -1)...)
}

// hPostedComment is the one comment on hPR.
func hPostedComment(t *testing.T, c *hCtx) fakegithub.Comment {
	t.Helper()
	cs := hFakeOf(c).srv.Comments(hPR)
	var ours []fakegithub.Comment
	for _, cm := range cs {
		if cm.Author == "ingest-bot" {
			ours = append(ours, cm)
		}
	}
	require.Len(t, ours, 1, "one report comment of ours")
	return ours[0]
}

func trustCommentCases() []hCase {
	pingRow := func(t *testing.T, dir string) {
		perJob(t, dir, "pings", benchRow(16, map[string]any{"model": "@octocat/backend-team", "hw": "@b200-owners #12", "precision": "fp8 GH-7"}))
		writeFile(t, filepath.Join(dir, "bmk_badping", "@mallory #99.json"), `{"conc": `)
	}
	return []hCase{
		{name: "comment-no-mentions", input: "`ingest run`: @user, @org/team, #12 and GH-7 in model, hardware, precision and a file name", base: baseNone, exit: 3,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{comment: true, tree: pingRow})
			}, check: func(t *testing.T, c *hCtx) {
				body := hPostedComment(t, c).Body
				require.Contains(t, body, "b200-owners")
				require.Contains(t, body, "mallory")
				require.Empty(t, hPings(body), "the comment notifies or links:\n%s", body)
			}},
		{name: "comment-over-github-limit", input: "`ingest run`: 24 rows with 1800-character unmapped values full of & and < (escaped 4.5 times longer)", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{comment: true, tree: func(t *testing.T, dir string) {
					for i := range 24 {
						long := fmt.Sprintf("%02d", i) + strings.Repeat("&<", 899)
						perJob(t, dir, fmt.Sprintf("long%02d", i), benchRow(100+i, map[string]any{"model": "m" + long, "hw": "h" + long, "precision": "p" + long, "framework": "f" + long}))
					}
				}})
			}, check: func(t *testing.T, c *hCtx) {
				body := hPostedComment(t, c).Body
				require.LessOrEqual(t, len([]rune(body)), fakegithub.MaxCommentLength)
				require.Contains(t, body, "| Category  | new | duplicate | skipped | unmapped | failed |")
				require.Contains(t, body, "Cut to fit GitHub's limit of 65,536 characters")
				require.Contains(t, body, "ingest report --run-id")
			}},
		{name: "comment-planted-by-another-user", input: "`ingest run`: a comment by another user carries our marker", base: baseNone, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{comment: true, setup: func(f *hFake) {
					c.state["planted"] = f.srv.AddCommentBy(hPR, "mallory", fmt.Sprintf("<!-- ingest-report source-run=%d -->\nplanted", f.runID))
				}})
			}, check: func(t *testing.T, c *hCtx) {
				all := hFakeOf(c).srv.Comments(hPR)
				require.Len(t, all, 2)
				require.Equal(t, c.state["planted"], all[0].ID)
				require.True(t, strings.HasSuffix(all[0].Body, "\nplanted"), "the planted comment was edited")
				require.Equal(t, "ingest-bot", hPostedComment(t, c).Author)
			}},
		{name: "zero-width-hardware", input: "hardware `b200\\u200b` (a zero-width space) beside the catalogued b200", base: baseBench, exit: 0,
			mutate: func(t *testing.T, dir string) { perJob(t, dir, "zw", benchRow(32, map[string]any{"hw": "b200\u200b"})) },
			args:   []string{"--format", "md"},
			want:   []string{"b200&lt;U+200B&gt;"}},
		{name: "headline-50000-missing", slow: true, input: "artifacts.json lists 50,000 artifacts the tree lacks", base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				hListing(t, dir, func(doc map[string]any) {
					arts := doc["artifacts"].([]any)
					proto := arts[0].(map[string]any)
					for i := range 50000 {
						e := map[string]any{}
						for k, v := range proto {
							e[k] = v
						}
						e["id"] = 900000000 + i
						e["name"] = fmt.Sprintf("bmk_missing_%05d", i)
						delete(e, "digest")
						arts = append(arts, e)
					}
					doc["artifacts"] = arts
					doc["total_count"] = len(arts)
				})
			},
			want:   []string{"with 50000 failures"},
			absent: []string{"with 10000 failures"},
			check: func(t *testing.T, c *hCtx) {
				require.NotNil(t, c.sum)
				require.EqualValues(t, 50000, c.sum.Details.MissingArtifacts)
				require.EqualValues(t, 50000, c.sum.FailureCount())
			}},
	}
}

// hSchemaAt sets the case database's schema version row with sql and
// restores the newest clean version when the case ends.
func hSchemaAt(t *testing.T, c *hCtx, sql string) {
	t.Helper()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	t.Cleanup(func() {
		hExecBG(t, c.db, `UPDATE ingest_schema_migrations SET version = $1, dirty = false`, int64(latest))
	})
	hExecBG(t, c.db, sql)
}

func trustSchemaCases() []hCase {
	return []hCase{
		{name: "schema-newer-than-binary", input: "`ingest load` into a database migrated one version past the binary", base: baseBench, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				hSchemaAt(t, c, `UPDATE ingest_schema_migrations SET version = version + 1`)
				return hLoad(t, c, "--run-id", "42")
			}, want: []string{"newer than this binary's", "does not write to it"}, absent: []string{"no migration found"}},
		{name: "schema-newer-no-migrate", input: "`ingest load --no-migrate` into a database migrated past the binary", base: baseBench, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				hSchemaAt(t, c, `UPDATE ingest_schema_migrations SET version = version + 1`)
				return hLoad(t, c, "--run-id", "42", "--no-migrate")
			}, want: []string{"newer than this binary's"}},
		{name: "schema-dirty-then-force", input: "`ingest load` into a dirty schema, then `ingest migrate force N`", base: baseBench, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				hSchemaAt(t, c, `UPDATE ingest_schema_migrations SET dirty = true`)
				r := hLoad(t, c, "--run-id", "42", "--no-migrate")
				latest, err := store.LatestMigration()
				require.NoError(t, err)
				f := hCLI(t.Context(), nil, "migrate", "force", strconv.FormatUint(uint64(latest), 10), "--database-url", c.db)
				c.state["force"] = f
				return r
			}, want: []string{"is dirty at version", `"ingest migrate force N"`},
			check: func(t *testing.T, c *hCtx) {
				f := c.state["force"].(hResult)
				require.Equal(t, 0, f.code, "migrate force: %s", f)
				require.Contains(t, f.stdout, "clean (was ")
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM ingest_schema_migrations WHERE dirty`))
			}},
		{name: "refresh-newer-schema", input: "`ingest refresh` on a database migrated past the binary", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				hSchemaAt(t, c, `UPDATE ingest_schema_migrations SET version = version + 1`)
				return hCLI(t.Context(), nil, "refresh", "--force", "--database-url", c.db)
			}, want: []string{"newer than this binary's"}},
	}
}

func trustUsageCases() []hCase {
	return []hCase{
		{name: "run-date-far-future", input: "`--run-date 9999-12-31`", base: baseBench, exit: 2, aborted: true,
			args: []string{"--run-date", "9999-12-31"}, want: []string{"--run-date: 9999-12-31T00:00:00Z is more than a day in the future"}},
		{name: "run-date-year-one", input: "`--run-date 0001-01-01`", base: baseBench, exit: 2, aborted: true,
			args: []string{"--run-date", "0001-01-01"}, want: []string{"is before 2024-01-01"}},
		{name: "run-date-from-env-tomorrow-ok", input: "INGEST_RUN_DATE within a day ahead is accepted and stored", base: baseBench, exit: 0,
			exec: func(t *testing.T, c *hCtx) hResult {
				d := time.Now().UTC().Add(12 * time.Hour).Truncate(time.Second)
				c.state["date"] = d
				return hCLI(t.Context(), map[string]string{"INGEST_RUN_DATE": d.Format(time.RFC3339)}, "load", c.dir, "--run-id", "42",
					"--database-url", c.db, "--summary-json", c.summary, "--log-level", "warn")
			}, check: func(t *testing.T, c *hCtx) {
				got := hQueryStrings(t, c.db, `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM workflow_runs WHERE github_run_id = 42`)
				require.NotEmpty(t, got)
				require.Equal(t, c.state["date"].(time.Time).Format(time.RFC3339), got[0], "the explicit date was not stored as given")
			}},
		{name: "usage-no-listing-no-run-id", input: "`ingest load` of a tree without artifacts.json and no --run-id, against an unmigrated database", base: baseBench, exit: 2,
			exec: func(t *testing.T, c *hCtx) hResult {
				empty, _ := hAdminDB(t, true)
				c.state["url"] = empty
				return hCLI(t.Context(), nil, "load", c.dir, "--database-url", empty)
			}, want: []string{"has no artifacts.json", "pass --run-id"}, absent: []string{"run 0"},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.state["url"].(string), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`), "the database was touched")
			}},
		{name: "actions-unreachable-database", input: "`ingest load` in GitHub Actions, the database unreachable", base: baseBench, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				summary := filepath.Join(t.TempDir(), "step_summary.md")
				c.state["step"] = summary
				return hCLI(t.Context(), map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary,
					"DATABASE_URL": "postgres://ingest:s3cret@127.0.0.1:1/nowhere?sslmode=disable"}, "load", c.dir, "--run-id", "42")
			}, want: []string{"::error title=Ingest aborted::connect to postgres://***@127.0.0.1:1/nowhere"}, absent: []string{"s3cret"},
			check: func(t *testing.T, c *hCtx) {
				b, err := os.ReadFile(c.state["step"].(string))
				require.NoError(t, err, "no job summary")
				require.Contains(t, strings.ReplaceAll(string(b), "\u2060", ""), "❌ Ingest failed: connect to postgres://\\*\\*\\*@127.0.0.1:1/nowhere")
				require.NotContains(t, string(b), "s3cret")
			}},
		{name: "actions-fetch-failed", input: "`ingest run` in GitHub Actions, GitHub answers 401 to the listing", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRunWith(t, c, hGH{vars: map[string]string{"GITHUB_ACTIONS": "true"}, setup: func(f *hFake) {
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.Status, Status: 401, Message: "Bad credentials"})
				}})
			}, want: []string{"::error title=Ingest aborted::"}},
	}
}

// hExecBG runs one statement on the case database, also from a cleanup
// (where t.Context is done).
func hExecBG(t *testing.T, dbURL, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	require.NoError(t, err)
}
