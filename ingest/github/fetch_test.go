package github_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/source"
)

func TestFetchDemoRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.False(t, res.Reused)
	require.Equal(t, 2, res.Source.Meta.RunAttempt)
	require.Equal(t, "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a46", res.Meta.HeadSHA)
	require.Len(t, res.Selected, e.demoArtifacts)
	require.Equal(t, e.demoArtifacts, res.Downloaded)
	require.Zero(t, res.Cached)

	// The tree: one zip per artifact and the listing, nothing else.
	entries, err := os.ReadDir(res.Dir)
	require.NoError(t, err)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	want := []string{source.ListingFile}
	for _, a := range res.Selected {
		want = append(want, a.Name+".zip")
	}
	sort.Strings(want)
	require.Equal(t, want, names)

	tree, err := source.Open(t.Context(), res.Dir, nil)
	require.NoError(t, err)
	defer tree.Close()
	require.True(t, tree.HasListing)
	require.Empty(t, tree.Problems)
	require.Equal(t, int64(demoRunID), tree.Run.RunID)
	require.Equal(t, 2, tree.Run.RunAttempt)
	require.Len(t, tree.Artifacts, e.demoArtifacts)
	for _, a := range tree.Artifacts {
		require.NoError(t, a.Load(), a.Name)
		require.NotNil(t, a.Listing, a.Name)
		require.Regexp(t, `^sha256:[0-9a-f]{64}$`, a.Listing.Digest)
	}
	downloads := e.fake.Count(fakegithub.RouteBlob)
	require.Equal(t, e.demoArtifacts, downloads)

	// Again: everything comes from the cache, the tree is the same.
	again, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.Equal(t, res.Dir, again.Dir)
	require.Equal(t, e.demoArtifacts, again.Cached)
	require.Zero(t, again.Downloaded)
	require.Equal(t, downloads, e.fake.Count(fakegithub.RouteBlob), "nothing downloaded twice")
	e.requireNoToken(t)
}

// TestFetchInterrupted: a fetch that fails half way keeps what it got; the
// next one downloads only the rest.
func TestFetchInterrupted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const broken = "results_bmk"
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Artifact: broken, Kind: fakegithub.Status, Status: 404, Times: 1})
	_, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.ErrorContains(t, err, "artifact results_bmk (id "+e.id(t, "results_bmk")+"): download")
	first := e.fake.Count(fakegithub.RouteBlob)

	res, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.Equal(t, e.demoArtifacts, res.Downloaded+res.Cached)
	require.Equal(t, e.demoArtifacts+1, e.fake.Count(fakegithub.RouteBlob), "each artifact fetched once, plus the refused try")
	require.Equal(t, first+res.Downloaded, e.fake.Count(fakegithub.RouteBlob))
	// No partial file is left in the cache.
	parts, _ := filepath.Glob(filepath.Join(e.cache, "*", "*", "artifacts", ".*"))
	require.Empty(t, parts)
}

// TestFetchPagination lists more artifacts than fit a page.
func TestFetchPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const runID = 555
	e.fake.AddRun(fakegithub.Run{ID: runID, Attempt: 1, Name: "Run Sweep"})
	for i := range 250 {
		e.fake.AddArtifact(fakegithub.Artifact{ID: int64(100000 + i), RunID: runID, Name: "bmk_" + string(rune('a'+i%26)) + "_" + itoa(i),
			Data: fakegithub.ZipFiles(map[string]string{"x.json": "{}"})})
	}
	list, err := e.client.ListArtifacts(t.Context(), runID)
	require.NoError(t, err)
	require.Len(t, list, 250)
	require.Equal(t, 3, e.fake.Count(fakegithub.RouteArtifacts), "100 per page")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestFetchEnterprise: a GitHub Enterprise base URL (GITHUB_API_URL is
// https://HOST/api/v3 there, without a trailing slash) works, pagination
// included.
func TestFetchEnterprise(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.newClient(t, func(o *github.Options) { o.BaseURL = e.fake.API.URL + "/api/v3" })
	const runID = 556
	e.fake.AddRun(fakegithub.Run{ID: runID, Attempt: 1})
	for i := range 150 {
		e.fake.AddArtifact(fakegithub.Artifact{ID: int64(200000 + i), RunID: runID, Name: "bmk_" + itoa(i), Data: fakegithub.ZipFiles(map[string]string{"x.json": "{}"})})
	}
	list, err := c.ListArtifacts(t.Context(), runID)
	require.NoError(t, err)
	require.Len(t, list, 150)
	res, err := c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.Len(t, res.Selected, e.demoArtifacts)
}

// TestFetchRemovesStaleParts: a partial download left by a killed process
// is removed once it is old; a fresh one (another live process) is kept.
func TestFetchRemovesStaleParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.cache, "SemiAnalysisAI", "InferenceX", "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	stale, fresh := filepath.Join(dir, ".1-old.part"), filepath.Join(dir, ".2-new.part")
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(fresh, []byte("x"), 0o644))
	old := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	_, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.NoFileExists(t, stale)
	require.FileExists(t, fresh)
}

// TestFetchRequireCompleted: a backfill asks for completed runs only; a
// re-run in progress is refused before its artifacts are even listed.
// `ingest run` does not ask, and fetches it as before.
func TestFetchRequireCompleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.AddRun(fakegithub.Run{ID: demoRunID, Attempt: 3, Status: "in_progress"})
	_, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID, RequireCompleted: true})
	var notDone *github.NotCompletedError
	require.ErrorAs(t, err, &notDone)
	require.Equal(t, github.NotCompletedError{RunID: demoRunID, Attempt: 3, Status: "in_progress"}, *notDone)
	require.Zero(t, e.fake.Count(fakegithub.RouteArtifacts))
	require.Zero(t, e.fake.Count(fakegithub.RouteBlob))

	res, err := e.client.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.Equal(t, 3, res.Source.Meta.RunAttempt)
}
