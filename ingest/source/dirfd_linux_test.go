//go:build linux

package source

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// openTreeLazy opens a tree without loading its artifacts.
func openTreeLazy(t *testing.T, dir string) *Tree {
	t.Helper()
	tree, err := Open(context.Background(), dir, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tree.Close()) })
	return tree
}

// The Linux fast path is what serves folders here, and it refuses to
// resolve through a link even where the last path element is plain.
func TestFdFolderRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"x":1}`), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "ok.json"), []byte(`{}`), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link")))

	if openRootFolder(dir) == nil {
		t.Skip("openat2 is not available on this kernel")
	}
	f, ok, err := openFdFolder(dir, true)
	require.NoError(t, err)
	require.True(t, ok)
	defer f.Close()
	var files, rejected []string
	require.NoError(t, f.list(new(direntBufs), func(name, _ string) { rejected = append(rejected, name) },
		func(name string, _ int64) { files = append(files, name) }))
	require.Equal(t, []string{"sub/ok.json"}, files)
	require.Equal(t, []string{"link"}, rejected)

	_, err = f.openFile("link/secret.json")
	require.Error(t, err, "a path through a link is refused by the kernel")
	_, err = f.openFile("../" + filepath.Base(outside) + "/secret.json")
	require.Error(t, err, "a path leaving the folder is refused")
	file, err := f.openFile("sub/ok.json")
	require.NoError(t, err)
	require.NoError(t, file.Close())
}

// Both ways of serving folders (openat2 and the os.Root fallback) list and
// serve the same files and reject the same entries.
func TestFolderPathsAgree(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "bmk_a")
	require.NoError(t, os.MkdirAll(filepath.Join(art, "nested"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(art, "agg.json"), []byte(`{"a":1}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(art, "nested", "b.json"), []byte(`[]`), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(art, "evil.json")))

	load := func(fast bool) (*Artifact, []byte) {
		tree := openTreeLazy(t, dir)
		a := tree.Artifact("bmk_a")
		if !fast {
			a.root = nil // the os.Root path
		}
		fsys, err := a.FS()
		require.NoError(t, err)
		data, err := fs.ReadFile(fsys, "nested/b.json")
		require.NoError(t, err)
		return a, data
	}
	fastA, fastData := load(true)
	slowA, slowData := load(false)
	require.Equal(t, []string{"agg.json", "nested/b.json"}, fastA.Files)
	require.Equal(t, slowA.Files, fastA.Files)
	require.Equal(t, slowA.Size, fastA.Size)
	require.Equal(t, slowA.Problems, fastA.Problems)
	require.Len(t, fastA.Problems, 1)
	require.Equal(t, slowData, fastData)
}
