package github_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/source"
)

// TestFetchHostile is the GitHub side of the second hostile round (issue
// 26): a blob that streams past its listed size, a slow-loris, a fetch
// over its budget or its deadline, a listing that drifts or loses its Link
// header, an artifact that expires or vanishes after the listing, a signed
// URL that expires, credentials in the base URL. The CLI side is in the
// table of package ingest (TestHostile).
func TestFetchHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite: not under -short")
	}
	t.Parallel()
	type fault = fakegithub.Fault
	tests := []struct {
		name   string
		faults []fault
		setup  func(t *testing.T, e *env)
		edit   func(o *github.Options, e *env)
		// wantErr: the fetch fails with this text; else it succeeds
		// with every demo artifact but the gone ones.
		wantErr string
		gone    map[string]int // artifact → 410 or 404
		check   func(t *testing.T, e *env, res *github.Result, took time.Duration)
	}{
		{name: "blob streams past its listed size", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Oversize}},
			wantErr: "artifact run-stats (id {id}): download: blob storage sent more than the listed ",
			check: func(t *testing.T, e *env, _ *github.Result, _ time.Duration) {
				require.Equal(t, 1, e.fake.Hits(fakegithub.RouteBlob), "a blob over its size is not fetched again")
			}},
		{name: "fetch over its download budget", edit: func(o *github.Options, _ *env) { o.DownloadBudget = 1000 },
			wantErr: "more than the download budget of 1000 bytes (--download-budget)",
			check: func(t *testing.T, e *env, _ *github.Result, _ time.Duration) {
				require.Zero(t, e.fake.Count(fakegithub.RouteBlob), "nothing is downloaded past a budget the listing exceeds")
			}},
		{name: "slow-loris download passes its deadline", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.SlowLoris, Interval: 100 * time.Millisecond}},
			edit:    func(o *github.Options, _ *env) { o.MinRate = 1 << 20; o.StallTimeout = 500 * time.Millisecond },
			wantErr: "artifact run-stats (id {id}): download: gave up after 4 attempts: blob storage http",
			check: func(t *testing.T, e *env, _ *github.Result, took time.Duration) {
				require.Less(t, took, 30*time.Second)
				require.Contains(t, e.logs.String(), "at the minimum rate of 1 MiB/s")
			}},
		{name: "slow-loris stopped by the fetch deadline", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.SlowLoris, Interval: 100 * time.Millisecond}},
			edit:    func(o *github.Options, _ *env) { o.FetchTimeout = 2 * time.Second; o.StallTimeout = time.Minute },
			wantErr: "the fetch took longer than 2s (--fetch-timeout)"},
		{name: "artifact expired after the listing", faults: []fault{{Route: fakegithub.RouteDownload, Artifact: "run-stats", Kind: fakegithub.Status, Status: 410, Message: "Artifact has expired"}},
			gone: map[string]int{"run-stats": 410}},
		{name: "artifact deleted after the listing", faults: []fault{{Route: fakegithub.RouteDownload, Artifact: "results_bmk", Kind: fakegithub.Status, Status: 404}},
			gone: map[string]int{"results_bmk": 404}},
		{name: "signed URL expired: the redirect is asked again", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Status, Status: 403, Message: "AuthenticationFailed: Signed expiry time has passed", Times: 2}},
			check: func(t *testing.T, e *env, _ *github.Result, _ time.Duration) {
				require.Equal(t, 2, e.fake.Hits(fakegithub.RouteBlob))
				require.Contains(t, e.logs.String(), "blob storage refused the signed URL (403)")
			}},
		{name: "signed URL refused on every try", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Status, Status: 403}},
			wantErr: "artifact run-stats (id {id}): download: gave up after 4 attempts: blob storage http"},
		{name: "listing drifts between pages", faults: []fault{{Route: fakegithub.RouteArtifacts, Kind: fakegithub.DriftAfterPage, Artifact: "changelog-metadata", Times: 1}},
			setup: func(t *testing.T, e *env) { e.fake.MaxPerPage = 5 },
			gone:  map[string]int{"changelog-metadata": 0},
			check: func(t *testing.T, e *env, _ *github.Result, _ time.Duration) {
				require.Contains(t, e.logs.String(), "total_count changed between pages")
			}},
		{name: "listing without Link header", faults: []fault{{Route: fakegithub.RouteArtifacts, Kind: fakegithub.NoLink}},
			setup: func(t *testing.T, e *env) { e.fake.MaxPerPage = 5 }},
		{name: "credentials in the base URL", edit: func(o *github.Options, e *env) {
			o.BaseURL = strings.Replace(e.fake.BaseURL(), "http://", "http://admin:hunter2@", 1)
		}, faults: []fault{{Route: fakegithub.RouteRun, Kind: fakegithub.Status, Status: 500}},
			wantErr: "run 28485856738: get run: gave up after 4 attempts: GET http://127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			for _, f := range tt.faults {
				e.fake.Inject(f)
			}
			c := e.newClient(t, func(o *github.Options) {
				if tt.edit != nil {
					tt.edit(o, e)
				}
			})
			started := time.Now()
			res, err := c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
			took := time.Since(started)
			parts, _ := filepath.Glob(filepath.Join(e.cache, "*", "*", "artifacts", ".*.part"))
			require.Empty(t, parts, "a partial download was left behind")
			require.NotContains(t, e.logs.String(), "hunter2")
			if tt.wantErr != "" {
				want := tt.wantErr
				if name := artifactOf(want); name != "" {
					want = strings.ReplaceAll(want, "{id}", e.id(t, name))
				}
				require.ErrorContains(t, err, want)
				require.NotContains(t, err.Error(), "hunter2")
				e.requireNoToken(t, err.Error())
				if tt.check != nil {
					tt.check(t, e, nil, took)
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Selected, e.demoArtifacts-len(tt.gone))
			entries, err := os.ReadDir(res.Dir)
			require.NoError(t, err)
			require.Len(t, entries, e.demoArtifacts-len(tt.gone)+1)
			tree, err := source.Open(t.Context(), res.Dir, nil)
			require.NoError(t, err)
			defer tree.Close()
			expired, missing := tree.Absent()
			var wantExpired, wantMissing []string
			for name, status := range tt.gone {
				if status == http.StatusGone {
					wantExpired = append(wantExpired, name)
				} else if status == http.StatusNotFound {
					wantMissing = append(wantMissing, name)
				}
			}
			require.ElementsMatch(t, wantExpired, expired, "the tree's listing marks the expired one expired")
			require.ElementsMatch(t, wantMissing, missing)
			if tt.check != nil {
				tt.check(t, e, res, took)
			}
			e.requireNoToken(t)
		})
	}
}

// TestFetchCleansKilledParts: a partial download named with the pid of a
// process that no longer runs (killed, even by SIGKILL) is removed at the
// next start whatever its age; one of a live process is kept.
func TestFetchCleansKilledParts(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite: not under -short")
	}
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.cache, "SemiAnalysisAI", "InferenceX", "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	dead := deadPID(t)
	killed := filepath.Join(dir, ".7-pid"+itoa(dead)+"-123.part")
	live := filepath.Join(dir, ".8-pid1-456.part") // pid 1 always runs
	require.NoError(t, os.WriteFile(killed, make([]byte, 1<<20), 0o644))
	require.NoError(t, os.WriteFile(live, []byte("x"), 0o644))
	_, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.NoFileExists(t, killed)
	require.FileExists(t, live)
}

// TestUpsertCommentOnlyOwn: a comment planted by someone else with our
// marker is never edited or deleted; ours is found by the token's
// identity — GET /user, or for an installation token (GET /user refused)
// github-actions[bot].
func TestUpsertCommentOnlyOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite: not under -short")
	}
	t.Parallel()
	for _, app := range []bool{false, true} {
		t.Run(map[bool]string{false: "user token", true: "installation token"}[app], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fake.AppToken = app
			planted := e.fake.AddCommentBy(20, "mallory", marker+"\nplanted")
			c, err := e.client.UpsertComment(t.Context(), 20, marker, marker+"\nours")
			require.NoError(t, err)
			require.True(t, c.Created)
			require.NotEqual(t, planted, c.ID)
			c2, err := e.client.UpsertComment(t.Context(), 20, marker, marker+"\nours again")
			require.NoError(t, err)
			require.Equal(t, c.ID, c2.ID)
			all := e.fake.Comments(20)
			require.Len(t, all, 2)
			require.Equal(t, fakegithub.Comment{ID: planted, Author: "mallory", Body: marker + "\nplanted"}, all[0])
			want := "ingest-bot"
			if app {
				want = fakegithub.AppLogin
			}
			require.Equal(t, want, all[1].Author)
			require.Equal(t, marker+"\nours again", all[1].Body)
			require.Zero(t, e.fake.Count(fakegithub.RouteDeleteComment))
			require.Contains(t, e.logs.String(), "not ours: left alone")
		})
	}
}

// TestFetchGitHubLegalNames: names GitHub allows but a file name cannot
// carry as is (spaces, parentheses, "#"; 252 to 254 characters, which
// with ".zip" pass 255 bytes) never fail the fetch. The run tree holds
// them under safe local names, and knows them by their names: the long
// valid one is read, the one with spaces refused by name, exactly as
// `load` treats folders of those names.
func TestFetchGitHubLegalNames(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite: not under -short")
	}
	t.Parallel()
	e := newEnv(t)
	const runID = 557
	long := "bmk_" + strings.Repeat("x", 250)
	weird := "bench results (retry #2)"
	mid := "bmk_" + strings.Repeat("y", 217) // 221 characters
	e.fake.AddRun(fakegithub.Run{ID: runID, Attempt: 1})
	for i, name := range []string{long, weird, mid, "run-stats"} {
		e.fake.AddArtifact(fakegithub.Artifact{ID: int64(300000 + i), RunID: runID, Name: name, Data: fakegithub.ZipFiles(map[string]string{"x.json": "{}"})})
	}
	res, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: runID})
	require.NoError(t, err)
	require.Len(t, res.Selected, 4)
	tree, err := source.Open(t.Context(), res.Dir, nil)
	require.NoError(t, err)
	defer tree.Close()
	var names []string
	for _, a := range tree.Artifacts {
		names = append(names, a.Name)
	}
	require.ElementsMatch(t, []string{long, mid, "run-stats"}, names)
	require.Len(t, tree.Problems, 1)
	require.Equal(t, weird, tree.Problems[0].Artifact)
	require.Contains(t, tree.Problems[0].Reason, "invalid artifact name")
	_, missing := tree.Absent()
	require.Equal(t, []string{weird}, missing, "the refused one is also reported as not read")
	entries, err := os.ReadDir(res.Dir)
	require.NoError(t, err)
	for _, en := range entries {
		require.LessOrEqual(t, len(en.Name()), 255)
		require.NotContains(t, en.Name(), " ")
	}
}
