package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestTreeRootEntries(t *testing.T) {
	t.Parallel()
	const notArtifact = "not an artifact: neither a folder nor a .zip"
	const badName = "invalid artifact name: must match ^[A-Za-z0-9][A-Za-z0-9_.+-]*$"
	tests := []struct {
		name          string
		setup         func(t *testing.T, dir string)
		wantArtifacts []string
		wantContainer map[string]Container
		wantProblems  []Problem
		wantListing   bool
	}{
		{
			name: "folders and zips",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "run-stats", "run_stats.json"), "{}")
				writeZip(t, filepath.Join(dir, "bmk_b.zip"), []zipEntry{{name: "agg.json", body: "{}"}})
				writeZip(t, filepath.Join(dir, "results_bmk.zip"), []zipEntry{{name: "agg_bmk.json", body: "[]"}})
				require.NoError(t, os.Mkdir(filepath.Join(dir, "empty_artifact"), 0o755))
			},
			wantArtifacts: []string{"bmk_b", "empty_artifact", "results_bmk", "run-stats"},
			wantContainer: map[string]Container{"bmk_b": ContainerZip, "empty_artifact": ContainerDir, "results_bmk": ContainerZip, "run-stats": ContainerDir},
		},
		{
			name: "stray root files",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "bmk_a", "agg.json"), "{}")
				writeFile(t, filepath.Join(dir, "notes.txt"), "hi")
				writeFile(t, filepath.Join(dir, "bmk_c.tar.gz"), "x")
				writeFile(t, filepath.Join(dir, "bmk_d.ZIP"), "x")
			},
			wantArtifacts: []string{"bmk_a"},
			wantProblems: []Problem{
				{Artifact: "bmk_c.tar.gz", Reason: notArtifact},
				{Artifact: "bmk_d.ZIP", Reason: notArtifact},
				{Artifact: "notes.txt", Reason: notArtifact},
			},
		},
		{
			name: "folder and zip with one name: the folder wins",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "bmk_a", "agg.json"), `"folder"`)
				writeZip(t, filepath.Join(dir, "bmk_a.zip"), []zipEntry{{name: "agg.json", body: `"zip"`}})
			},
			wantArtifacts: []string{"bmk_a"},
			wantContainer: map[string]Container{"bmk_a": ContainerDir},
			wantProblems:  []Problem{{Artifact: "bmk_a", File: "bmk_a.zip", Reason: "name collision: both a folder and a .zip; the folder is used"}},
		},
		{
			name: "bad artifact names",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "bmk_ok", "agg.json"), "{}")
				writeFile(t, filepath.Join(dir, "has space", "agg.json"), "{}")
				writeFile(t, filepath.Join(dir, ".hidden", "agg.json"), "{}")
				writeZip(t, filepath.Join(dir, "bad:name.zip"), []zipEntry{{name: "a.json"}})
				writeZip(t, filepath.Join(dir, ".zip"), []zipEntry{{name: "a.json"}})
				writeFile(t, filepath.Join(dir, "tab\tname", "agg.json"), "{}")
			},
			wantArtifacts: []string{"bmk_ok"},
			wantProblems: []Problem{
				{Artifact: `"tab\tname"`, Reason: badName},
				{Artifact: "bad:name.zip", Reason: badName},
				{Artifact: "has space", Reason: badName},
			},
		},
		{
			name: "root symlinks",
			setup: func(t *testing.T, dir string) {
				outside := t.TempDir()
				writeFile(t, filepath.Join(outside, "agg.json"), "{}")
				writeZip(t, filepath.Join(outside, "real.zip"), []zipEntry{{name: "agg.json"}})
				require.NoError(t, os.Symlink(outside, filepath.Join(dir, "bmk_link")))
				require.NoError(t, os.Symlink(filepath.Join(outside, "real.zip"), filepath.Join(dir, "bmk_zip.zip")))
			},
			wantProblems: []Problem{
				{Artifact: "bmk_link", Reason: "symbolic link rejected"},
				{Artifact: "bmk_zip.zip", Reason: "symbolic link rejected"},
			},
		},
		{
			name: "a manifest that is a folder is unused beside artifacts.json",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, ListingFile), "[]")
				require.NoError(t, os.Mkdir(filepath.Join(dir, ManifestFile), 0o755))
			},
			wantProblems: []Problem{{File: ManifestFile, Reason: "listing is not a regular file"}},
			wantListing:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			tree := openTree(t, dir)
			var names []string
			for _, a := range tree.Artifacts {
				names = append(names, a.Name)
				require.NoError(t, a.Err, a.Name)
				if c, ok := tt.wantContainer[a.Name]; ok {
					require.Equal(t, c, a.Container, a.Name)
				}
			}
			require.Equal(t, tt.wantArtifacts, names)
			require.Equal(t, tt.wantProblems, tree.Problems)
			require.Equal(t, tt.wantListing, tree.HasListing)
			require.NoError(t, tree.ListingErr)
		})
	}
}

func TestTreeCollisionServesFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_a", "agg.json"), `"folder"`)
	writeZip(t, filepath.Join(dir, "bmk_a.zip"), []zipEntry{{name: "agg.json", body: `"zip"`}})
	tree := openTree(t, dir)
	require.Equal(t, `"folder"`, readString(t, artifactFS(t, tree, "bmk_a"), "agg.json"))
}

func TestTreeArtifactLookup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"c", "a", "b"} {
		writeFile(t, filepath.Join(dir, name, "x.json"), "{}")
	}
	tree := openTree(t, dir)
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	require.Equal(t, abs, tree.Root)
	for _, name := range []string{"a", "b", "c"} {
		require.Equal(t, name, tree.Artifact(name).Name)
	}
	require.Nil(t, tree.Artifact("d"))
	require.Nil(t, tree.Artifact(""))
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		dir  string
		want string
	}{
		{name: "missing", ctx: context.Background(), dir: filepath.Join(dir, "missing"), want: "no such file or directory"},
		{name: "not a directory", ctx: context.Background(), dir: file, want: "not a directory"},
		{name: "cancelled", ctx: cancelled, dir: dir, want: context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := Open(tt.ctx, tt.dir, zaptest.NewLogger(t))
			require.Nil(t, tree)
			require.ErrorContains(t, err, "source "+tt.dir)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// A cancelled context stops Open before it reads artifacts.
func TestOpenStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		writeZip(t, filepath.Join(dir, name+".zip"), []zipEntry{{name: "x.json", body: "{}"}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tree, err := Open(ctx, dir, zaptest.NewLogger(t))
	require.Nil(t, tree)
	require.ErrorIs(t, err, context.Canceled)
}

// Open names the artifacts without reading them: a truncated zip is only
// found out when the artifact is loaded (FS loads it too).
func TestOpenIsLazy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bmk_a.zip")
	writeZip(t, path, []zipEntry{{name: "agg.json", body: "{}"}})
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o644))

	tree, err := Open(context.Background(), dir, zaptest.NewLogger(t))
	require.NoError(t, err)
	a := tree.Artifact("bmk_a")
	require.NotNil(t, a)
	require.NoError(t, a.Err)
	require.Nil(t, a.Files)
	_, err = a.FS()
	require.ErrorContains(t, err, "unreadable zip")
	require.Equal(t, err, a.Load(), "Load runs once and keeps its error")
}

// Hidden entries at the root are ignored, not reported.
func TestHiddenRootEntriesIgnored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bmk_a"), 0o755))
	tree := openTree(t, dir)
	require.Empty(t, tree.Problems)
	require.Len(t, tree.Artifacts, 1)
}
