package source

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// sampleFiles is one artifact's content, laid out like a single-node
// agentic artifact (nested directories, a file at the root).
var sampleFiles = []struct{ name, body string }{
	{"server.log", "server up\n"},
	{"aiperf_artifacts/profile_export.jsonl", "{\"a\":1}\n{\"a\":2}\n"},
	{"aiperf_artifacts/server_metrics_export.json", `{"metrics":[]}`},
	{"aiperf_artifacts/run_0/profile_export_aiperf.json", `{"x":1}`},
	{"gpu_metrics.csv", "timestamp,index\n"},
}

func TestDirAndZipServeSameFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The zip has one explicit directory entry and relies on implicit
	// parents for the rest, in a scrambled order.
	entries := []zipEntry{{name: "aiperf_artifacts/"}}
	var total int64
	for i := len(sampleFiles) - 1; i >= 0; i-- {
		f := sampleFiles[i]
		entries = append(entries, zipEntry{name: f.name, body: f.body})
		writeFile(t, filepath.Join(dir, "agentic_dir", filepath.FromSlash(f.name)), f.body)
		total += int64(len(f.body))
	}
	data := writeZip(t, filepath.Join(dir, "agentic_zip.zip"), entries)

	tree := openTree(t, dir)
	wantFiles := []string{
		"aiperf_artifacts/profile_export.jsonl",
		"aiperf_artifacts/run_0/profile_export_aiperf.json",
		"aiperf_artifacts/server_metrics_export.json",
		"gpu_metrics.csv",
		"server.log",
	}
	dirA, zipA := tree.Artifact("agentic_dir"), tree.Artifact("agentic_zip")
	require.Equal(t, ContainerDir, dirA.Container)
	require.Equal(t, ContainerZip, zipA.Container)
	require.Equal(t, filepath.Join(tree.Root, "agentic_dir"), dirA.Path)
	require.Equal(t, filepath.Join(tree.Root, "agentic_zip.zip"), zipA.Path)
	require.Equal(t, total, dirA.Size)
	require.Equal(t, int64(len(data)), zipA.Size)
	require.Empty(t, dirA.Digest)
	require.Equal(t, digestOf(data), zipA.Digest)

	for _, a := range []*Artifact{dirA, zipA} {
		require.NoError(t, a.Err, a.Name)
		require.Empty(t, a.Problems, a.Name)
		require.Equal(t, wantFiles, a.Files, a.Name)
		fsys := artifactFS(t, tree, a.Name)
		require.NoError(t, fstest.TestFS(fsys, wantFiles...), a.Name)
		for _, f := range sampleFiles {
			require.Equal(t, f.body, readString(t, fsys, f.name), "%s: %s", a.Name, f.name)
		}
		require.Implements(t, (*fs.ReadDirFS)(nil), fsys)
		require.Implements(t, (*fs.StatFS)(nil), fsys)
		entries, err := fs.ReadDir(fsys, "aiperf_artifacts")
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.Equal(t, []string{"profile_export.jsonl", "run_0", "server_metrics_export.json"}, names, a.Name)
		info, err := fs.Stat(fsys, "server.log")
		require.NoError(t, err)
		require.Equal(t, int64(len("server up\n")), info.Size())
		require.True(t, info.Mode().IsRegular())
		_, err = fs.ReadDir(fsys, "server.log")
		require.Error(t, err)
		_, err = fsys.Open("../agentic_zip.zip")
		require.ErrorIs(t, err, fs.ErrInvalid)
	}
}

func TestDirArtifactLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.json"), `{"secret":true}`)
	art := filepath.Join(dir, "bmk_links")
	writeFile(t, filepath.Join(art, "agg.json"), `{"conc":1}`)
	writeFile(t, filepath.Join(art, "sub", "inner.json"), `{}`)
	require.NoError(t, os.Symlink("agg.json", filepath.Join(art, "inside.json")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(art, "escape.json")))
	require.NoError(t, os.Symlink("../../"+filepath.Base(outside), filepath.Join(art, "sub", "up")))
	require.NoError(t, os.Symlink(outside, filepath.Join(art, "outdir")))

	tree := openTree(t, dir)
	a := tree.Artifact("bmk_links")
	require.NoError(t, a.Err)
	require.Equal(t, []string{"agg.json", "sub/inner.json"}, a.Files)
	require.Equal(t, []Problem{
		{Artifact: "bmk_links", File: "escape.json", Reason: "symbolic link rejected"},
		{Artifact: "bmk_links", File: "inside.json", Reason: "symbolic link rejected"},
		{Artifact: "bmk_links", File: "outdir", Reason: "symbolic link rejected"},
		{Artifact: "bmk_links", File: "sub/up", Reason: "symbolic link rejected"},
	}, a.Problems)

	fsys := artifactFS(t, tree, "bmk_links")
	require.NoError(t, fstest.TestFS(fsys, "agg.json", "sub/inner.json"))
	for _, name := range []string{"inside.json", "escape.json", "outdir/secret.json", "sub/up/secret.json"} {
		_, err := fs.ReadFile(fsys, name)
		require.ErrorIs(t, err, fs.ErrNotExist, name)
	}
}

func TestDirArtifactFileTurnedSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.json"), `{"secret":true}`)
	art := filepath.Join(dir, "bmk_race")
	writeFile(t, filepath.Join(art, "agg.json"), `{}`)
	tree := openTree(t, dir)
	require.Equal(t, []string{"agg.json"}, tree.Artifact("bmk_race").Files)

	// Swapped for a link after listing: the os.Root refuses to leave the
	// artifact folder.
	require.NoError(t, os.Remove(filepath.Join(art, "agg.json")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(art, "agg.json")))
	fsys := artifactFS(t, tree, "bmk_race")
	_, err := fs.ReadFile(fsys, "agg.json")
	require.Error(t, err)
	_, err = fs.Stat(fsys, "agg.json")
	require.Error(t, err)
}

func TestReleaseThenReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_dir", "agg.json"), `{"v":1}`)
	writeZip(t, filepath.Join(dir, "bmk_zip.zip"), []zipEntry{{name: "agg.json", body: `{"v":1}`}})
	tree := openTree(t, dir)
	for _, name := range []string{"bmk_dir", "bmk_zip"} {
		a := tree.Artifact(name)
		first, err := a.FS()
		require.NoError(t, err)
		again, err := a.FS()
		require.NoError(t, err)
		require.Same(t, first, again, "FS is cached until Release")
		require.Equal(t, `{"v":1}`, readString(t, first, "agg.json"))

		require.NoError(t, a.Release())
		require.NoError(t, a.Release(), "Release twice is harmless")
		_, err = fs.ReadFile(first, "agg.json")
		require.Error(t, err, "%s: a released FS must not read", name)

		reopened, err := a.FS()
		require.NoError(t, err)
		require.Equal(t, `{"v":1}`, readString(t, reopened, "agg.json"))
	}
}
