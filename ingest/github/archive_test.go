package github_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/source"
)

// archiveOf writes a mirror holding the named artifacts of the demo run
// with the bytes GitHub served (what the copier saves).
func archiveOf(t *testing.T, e *env, names ...string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "2026-01-05", fmt.Sprintf("Full_Sweep_%d", demoRunID), "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, a := range e.fake.Artifacts(demoRunID) {
		if slices.Contains(names, a.Name) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s_%d.zip", a.Name, a.ID)), a.Data, 0o644))
		}
	}
	return root
}

func openArchive(t *testing.T, url string, o archive.Options) *archive.Archive {
	t.Helper()
	a, err := archive.Open(context.Background(), url, o)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

// TestFetchSources: auto takes the artifacts GitHub still has from GitHub
// and the expired ones from the archive, per artifact, and says which; the
// archive source reads the archive only; github ignores it.
func TestFetchSources(t *testing.T) {
	t.Parallel()
	const x, y, z = "run-stats", "results_bmk", "eval_results_all"
	for _, tc := range []struct {
		name         string
		source       github.Source
		noToken      bool
		wantSelected func(all int) int
		wantArchive  []string
		wantBlobs    func(all int) int
		wantNote     string
	}{
		{name: "auto", source: github.SourceAuto, wantSelected: func(all int) int { return all },
			wantArchive: []string{y, x}, wantBlobs: func(all int) int { return all - 2 }, wantNote: "2 of "},
		{name: "github", source: github.SourceGitHub, wantSelected: func(all int) int { return all - 2 },
			wantBlobs: func(all int) int { return all - 2 }},
		{name: "archive", source: github.SourceArchive, wantSelected: func(int) int { return 3 },
			wantArchive: []string{z, y, x}, wantBlobs: func(int) int { return 0 }, wantNote: "all 3 artifacts were read from the archive"},
		{name: "auto without a token", source: github.SourceAuto, noToken: true, wantSelected: func(int) int { return 3 },
			wantArchive: []string{z, y, x}, wantBlobs: func(int) int { return 0 }, wantNote: "run facts inferred from the archive (no GitHub token)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fake.SetExpired(demoRunID, x, true)
			e.fake.SetExpired(demoRunID, y, true)
			arch := openArchive(t, archiveOf(t, e, x, y, z), archive.Options{})
			c := e.newClient(t, func(o *github.Options) {
				o.Archive = arch
				if tc.noToken {
					o.Token = ""
				}
			})
			res, err := c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID, Source: tc.source})
			require.NoError(t, err)
			require.Len(t, res.Selected, tc.wantSelected(e.demoArtifacts))
			require.ElementsMatch(t, tc.wantArchive, res.FromArchive)
			require.Equal(t, tc.wantBlobs(e.demoArtifacts), e.fake.Count(fakegithub.RouteBlob))
			if tc.wantNote != "" {
				require.Contains(t, strings.Join(res.Notes, "\n"), tc.wantNote)
			}
			tree, err := source.Open(t.Context(), res.Dir, nil)
			require.NoError(t, err)
			defer tree.Close()
			require.Len(t, tree.Artifacts, tc.wantSelected(e.demoArtifacts))
			for _, a := range tree.Artifacts {
				require.NoError(t, a.Load(), a.Name)
			}
			require.Equal(t, int64(demoRunID), tree.Run.RunID)
			if tc.noToken {
				require.Empty(t, tree.Run.HeadSHA, "no head SHA without metadata or GitHub")
			} else {
				require.Equal(t, "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a46", tree.Run.HeadSHA, "facts from GitHub")
			}
			e.requireNoToken(t)
		})
	}
}

// TestFetchArchiveCorrupt: an archived artifact whose bytes fail the
// store's checksums is that artifact's loss (reported), not the fetch's.
func TestFetchArchiveCorrupt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetExpired(demoRunID, "run-stats", true)
	e.fake.SetExpired(demoRunID, "results_bmk", true)
	_, opts := archivetest.Serve(t, archiveOf(t, e, "run-stats", "results_bmk"), "backup", "")
	arch := openArchive(t, "gs://backup", archivetest.Corrupting(opts, "/run-stats_"+e.id(t, "run-stats")+".zip"))
	c := e.newClient(t, func(o *github.Options) { o.Archive = arch })
	res, err := c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID})
	require.NoError(t, err)
	require.Equal(t, []string{"results_bmk"}, res.FromArchive)
	require.Len(t, res.Selected, e.demoArtifacts-1)
	require.Len(t, res.Unavailable, 1)
	require.Contains(t, strings.Join(res.Notes, "\n"), "artifact run-stats (id "+e.id(t, "run-stats")+") not read from the archive")
	_, err = os.Stat(filepath.Join(res.Dir, "run-stats.zip"))
	require.True(t, os.IsNotExist(err))
}

// TestFetchArchiveReupload: of two uploads of one name in the archive,
// the larger artifact id is taken: without metadata there are no creation
// times, and with metadata whose times say the other upload is newer the
// ids still decide (the copier's times are not GitHub's order).
func TestFetchArchiveReupload(t *testing.T) {
	t.Parallel()
	for _, withMetadata := range []bool{false, true} {
		t.Run(fmt.Sprintf("metadata %v", withMetadata), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			root := archiveOf(t, e, "run-stats", "results_bmk")
			dir := filepath.Join(root, "2026-01-05", fmt.Sprintf("Full_Sweep_%d", demoRunID), "artifacts")
			var stats []byte
			for _, a := range e.fake.Artifacts(demoRunID) {
				if a.Name == "run-stats" {
					stats = a.Data
				}
			}
			older := e.ids["run-stats"]
			newer := older + 1_000_000
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("run-stats_%d.zip", newer)), stats, 0o644))
			if withMetadata {
				meta := fmt.Sprintf(`[{"id":%d,"name":"run-stats","created_at":"2026-01-05T12:00:00Z","workflow_run":{"id":%d,"head_sha":"abc"}},
				  {"id":%d,"name":"run-stats","created_at":"2026-01-05T08:00:00Z","workflow_run":{"id":%d,"head_sha":"abc"}}]`, older, demoRunID, newer, demoRunID)
				require.NoError(t, os.WriteFile(filepath.Join(dir, archive.MetadataFile), []byte(meta), 0o644))
			}
			c := e.newClient(t, func(o *github.Options) { o.Archive = openArchive(t, root, archive.Options{}) })
			res, err := c.Fetch(t.Context(), github.Request{SourceRunID: demoRunID, Source: github.SourceArchive})
			require.NoError(t, err)
			var picked int64
			for _, a := range res.Selected {
				if a.Name == "run-stats" {
					picked = a.ID
				}
			}
			require.Equal(t, newer, picked, "the larger artifact id")
			require.Len(t, res.Selected, 2)
			require.Len(t, res.Listed, 3, "the listing keeps both uploads")
		})
	}
}
