//go:build unix

package source

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// oddTree writes folder artifacts of every kind the listing judges: clean
// ones (nested, empty, with an empty folder inside) and ones holding a
// link, a pipe or names with problems.
func oddTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_a", "a.json"), `{"conc": 4}`)
	writeFile(t, filepath.Join(dir, "bmk_a", "sub", "b.json"), `[1, 2]`)
	writeFile(t, filepath.Join(dir, "bmk_a.b", "c.json"), `[]`)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bmk_empty"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bmk_hollow", "inner"), 0o755))
	writeFile(t, filepath.Join(dir, "bmk_link", "a.json"), `{}`)
	require.NoError(t, os.Symlink("a.json", filepath.Join(dir, "bmk_link", "b.json")))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "bmk_link", "up")))
	writeFile(t, filepath.Join(dir, "bmk_odd", "ok.json"), `{}`)
	writeFile(t, filepath.Join(dir, "bmk_odd", `back\slash.json`), "{}")
	writeFile(t, filepath.Join(dir, "bmk_odd", "new\nline.json"), "{}")
	writeFile(t, filepath.Join(dir, "bmk_odd", `bad\dir`, "inside.json"), "{}")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "bmk_odd", "pipe"), 0o644))
	writeFile(t, filepath.Join(dir, "stray.json"), `{}`)
	return dir
}

// watchedTree opens dir with its digest watching it, as an ingest does,
// and waits for the digest's walk.
func watchedTree(t *testing.T, dir string) (*Tree, *Digesting) {
	t.Helper()
	d := StartDigest(context.Background(), dir)
	t.Cleanup(d.Stop)
	tree, err := Open(context.Background(), dir, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tree.Close()) })
	d.Watch(tree)
	<-d.listing.done
	return tree, d
}

// TestWatchedFoldersListAsUnwatched: a folder artifact of a watched tree
// takes its listing from the digest's walk when the walk saw it clean,
// and lists itself otherwise; either way its files, size and problems are
// those of an artifact that lists itself, and its files are served.
func TestWatchedFoldersListAsUnwatched(t *testing.T) {
	t.Parallel()
	dir := oddTree(t)
	plain := openTree(t, dir)
	watched, d := watchedTree(t, dir)
	require.NoError(t, watched.LoadAll(context.Background()))
	require.Len(t, watched.Artifacts, len(plain.Artifacts))
	for i, a := range watched.Artifacts {
		p := plain.Artifacts[i]
		require.Equal(t, p.Name, a.Name)
		require.Equal(t, p.Err, a.Err, a.Name)
		require.Equal(t, p.Files, a.Files, a.Name)
		require.Equal(t, p.Size, a.Size, a.Name)
		require.Equal(t, p.Problems, a.Problems, a.Name)
		fsys := artifactFS(t, watched, a.Name)
		for _, f := range a.Files {
			require.Equal(t, readString(t, artifactFS(t, plain, a.Name), f), readString(t, fsys, f))
		}
		require.Equal(t, walkFS(t, artifactFS(t, plain, a.Name)), walkFS(t, fsys), a.Name)
	}
	// Only the clean folders come from the walk.
	d.listing.folder("bmk_a")
	var fromWalk []string
	for name := range d.listing.folders {
		fromWalk = append(fromWalk, name)
	}
	require.ElementsMatch(t, []string{"bmk_a", "bmk_a.b", "bmk_empty", "bmk_hollow"}, fromWalk)
	require.Equal(t, []walkedFile{{"a.json", 11}, {"sub/b.json", 6}}, d.listing.folders["bmk_a"])
}

// walkFS describes every entry of fsys as fs.WalkDir and fs.Stat see it.
func walkFS(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var out []string
	require.NoError(t, fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := fs.Stat(fsys, p)
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%s %s %v %s %v %d", p, d.Name(), d.IsDir(), info.Name(), info.Mode(), sizeOfFile(info)))
		return nil
	}))
	return out
}

// sizeOfFile is a file's size, 0 for a folder (whose size the file
// system decides).
func sizeOfFile(info fs.FileInfo) int64 {
	if info.IsDir() {
		return 0
	}
	return info.Size()
}

// TestWatchedFolderListsTheWalk: the walk's listing is a snapshot (that of
// the digest, which is what the ingest's inputs are recorded as), indexed
// when a folder first asks for it; a file
// added to a folder after the walk is not listed, a file removed after it
// fails as it is opened, and a folder turned into a link is not followed.
func TestWatchedFolderListsTheWalk(t *testing.T) {
	t.Parallel()
	dir := oddTree(t)
	watched, d := watchedTree(t, dir)
	require.Nil(t, d.listing.folders, "indexed before any folder asked")
	writeFile(t, filepath.Join(dir, "bmk_a", "late.json"), `{}`)
	require.NoError(t, os.Remove(filepath.Join(dir, "bmk_a", "a.json")))
	a := watched.Artifact("bmk_a")
	require.NoError(t, a.Load())
	require.Equal(t, []string{"a.json", "sub/b.json"}, a.Files)
	_, err := fs.ReadFile(artifactFS(t, watched, "bmk_a"), "a.json")
	require.ErrorIs(t, err, fs.ErrNotExist)

	// A folder swapped for a link after the walk is not followed.
	elsewhere := t.TempDir()
	writeFile(t, filepath.Join(elsewhere, "c.json"), `"outside"`)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "bmk_a.b")))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, "bmk_a.b")))
	fsys := artifactFS(t, watched, "bmk_a.b") // loaded and served at once, as the stages do
	require.Equal(t, []string{"c.json"}, watched.Artifact("bmk_a.b").Files)
	_, err = fs.ReadFile(fsys, "c.json")
	require.ErrorIs(t, err, syscall.ELOOP)
}

// TestFailedWalkListsEveryFolder: when the digest's walk fails, every
// folder lists itself.
func TestFailedWalkListsEveryFolder(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads any folder")
	}
	dir := oddTree(t)
	locked := filepath.Join(dir, "bmk_locked")
	writeFile(t, filepath.Join(locked, "x.json"), `{}`)
	require.NoError(t, os.Chmod(locked, 0))
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	watched, d := watchedTree(t, dir)
	_, ok := d.listing.folder("bmk_a")
	require.False(t, ok)
	require.Nil(t, d.listing.folders)
	a := watched.Artifact("bmk_a")
	require.NoError(t, a.Load())
	require.Equal(t, []string{"a.json", "sub/b.json"}, a.Files)
}

// TestWalkListingWithoutWalk: a listing whose walk failed, or an artifact
// no digest watches, has no folders to give.
func TestWalkListingWithoutWalk(t *testing.T) {
	t.Parallel()
	l := newWalkListing()
	l.fail()
	_, ok := l.folder("bmk_a")
	require.False(t, ok)
	var none *walkListing
	_, ok = none.folder("bmk_a")
	require.False(t, ok)
}

// TestReleaseThenReopenWatched is TestReleaseThenReopen for a folder of a
// watched tree, served through the tree's root: its FS obtained before
// Release does not read afterwards either, and the next FS does.
func TestReleaseThenReopenWatched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_dir", "agg.json"), `{"v":1}`)
	tree, _ := watchedTree(t, dir)
	a := tree.Artifact("bmk_dir")
	first, err := a.FS()
	require.NoError(t, err)
	require.Equal(t, `{"v":1}`, readString(t, first, "agg.json"))
	require.NoError(t, a.Release())
	require.NoError(t, a.Release(), "Release twice is harmless")
	_, err = fs.ReadFile(first, "agg.json")
	require.Error(t, err, "a released FS must not read")
	_, err = fs.Stat(first, "agg.json")
	require.Error(t, err, "a released FS must not stat")
	reopened, err := a.FS()
	require.NoError(t, err)
	require.Equal(t, `{"v":1}`, readString(t, reopened, "agg.json"))
}
