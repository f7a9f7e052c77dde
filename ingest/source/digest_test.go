package source

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// treeDigest digests the tree at dir given an earlier index, and returns the
// digest, the new index and how many files it indexed.
func treeDigest(t *testing.T, dir string, index []byte) ([]byte, []byte, int) {
	t.Helper()
	d := StartDigest(context.Background(), dir)
	d.Use(index)
	sum, idx, err := d.Wait(context.Background())
	require.NoError(t, err)
	return sum, idx, trusted(decodeFileIndex(idx))
}

// trusted counts the files of an index whose metadata a walk can match
// (a file not to be trusted is indexed with zero times).
func trusted(idx FileIndex) int {
	n := 0
	for _, f := range idx {
		if f.stat.mtime != 0 || f.stat.ctime != 0 {
			n++
		}
	}
	return n
}

// TestDigestFileIndex: a file recorded in the index with the metadata the
// walk reads is not read again, and the digest is the same as when every
// file is read; a file whose content changed is read again even when its
// size and modification time were put back, because its change time
// moved; a file changed within the racy window is indexed with its sum
// but no metadata a walk could match.
func TestDigestFileIndex(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "bmk_a")
	require.NoError(t, os.Mkdir(art, 0o755))
	file := filepath.Join(art, "a.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"conc": 4}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "artifacts.json"), []byte(`{"artifacts": []}`), 0o644))
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{file, filepath.Join(dir, "artifacts.json")} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	// Files changed seconds ago (the change time of a Chtimes is now) are
	// racy: hashed, indexed with their sums, never trusted.
	full, racy, n := treeDigest(t, dir, nil)
	require.Zero(t, n, "files changed within the racy window were trusted")
	require.Len(t, FileSums(racy), 2, "every file's sum is in the index")

	// Once the change times are old enough, they are indexed.
	cut := time.Now().Add(racyWindow + time.Second)
	entries := []digestEntry{}
	require.NoError(t, walkTree(dir, "", false, &entries))
	require.NoError(t, hashFiles(context.Background(), dir, entries, nil))
	idx := encodeFileIndex(entries, cut.UnixNano())
	require.Len(t, decodeFileIndex(idx), 2)
	require.Equal(t, 2, trusted(decodeFileIndex(idx)))

	// An index whose sums are wrong is believed when the metadata match:
	// proof that indexed files are not read again.
	lie := decodeFileIndex(idx)
	f := lie["bmk_a/a.json"]
	f.sum[0] ^= 0xff
	lie["bmk_a/a.json"] = f
	for i := range entries {
		if entries[i].path == "bmk_a/a.json" {
			entries[i].sum = f.sum
		}
	}
	lied, _, _ := treeDigest(t, dir, encodeFileIndex(entries, cut.UnixNano()))
	require.NotEqual(t, full, lied, "an indexed file was read again")

	// With the true index the digest is the one of reading every file.
	again, _, _ := treeDigest(t, dir, idx)
	require.Equal(t, full, again)
	// So it is with an index stored uncompressed, as ingests wrote it
	// before indexes were compressed.
	require.True(t, bytes.HasPrefix(idx, []byte(fileIndexS2Magic)), "the index was not written compressed")
	trueEntries := []digestEntry{}
	require.NoError(t, walkTree(dir, "", false, &trueEntries))
	require.NoError(t, hashFiles(context.Background(), dir, trueEntries, nil))
	plain := encodeFileEntries(trueEntries, cut.UnixNano())
	require.True(t, bytes.HasPrefix(plain, []byte(fileIndexMagic)))
	require.Equal(t, decodeFileIndex(idx), decodeFileIndex(plain))
	oldForm, _, _ := treeDigest(t, dir, plain)
	require.Equal(t, full, oldForm)

	// Same size, modification time put back: the change time moved.
	require.NoError(t, os.WriteFile(file, []byte(`{"conc": 8}`), 0o644))
	require.NoError(t, os.Chtimes(file, old, old))
	changed, _, _ := treeDigest(t, dir, idx)
	require.NotEqual(t, full, changed, "a changed file was taken from the index")
	fresh, _, _ := treeDigest(t, dir, nil)
	require.Equal(t, fresh, changed)

	// An index that does not decode is ignored.
	require.Nil(t, decodeFileIndex([]byte("not an index")))
	require.Nil(t, decodeFileIndex(idx[:len(idx)-5]))
	junk, _, _ := treeDigest(t, dir, []byte("not an index"))
	require.Equal(t, fresh, junk)
}

// TestDigestSeesEveryInput: the digest changes with a file's content, a
// new file, a renamed file and a link's target, and not with the tree's
// location.
func TestDigestSeesEveryInput(t *testing.T) {
	make := func(t *testing.T) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "bmk_a", "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bmk_a", "a.json"), []byte(`{"conc": 4}`), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bmk_a", "sub", "b.json"), []byte(`[]`), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "artifacts.json"), []byte(`{"artifacts": []}`), 0o644))
		return dir
	}
	base, _, _ := treeDigest(t, make(t), nil)
	elsewhere, _, _ := treeDigest(t, make(t), nil)
	require.Equal(t, base, elsewhere, "the digest depends on where the tree is")
	for name, change := range map[string]func(dir string) error{
		"content": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "bmk_a", "sub", "b.json"), []byte(`[1]`), 0o644)
		},
		"new file": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "bmk_a", "c.json"), nil, 0o644)
		},
		"renamed": func(dir string) error {
			return os.Rename(filepath.Join(dir, "bmk_a", "a.json"), filepath.Join(dir, "bmk_a", "z.json"))
		},
		"link": func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "bmk_a", "l.json")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := make(t)
			require.NoError(t, change(dir))
			d, _, _ := treeDigest(t, dir, nil)
			require.NotEqual(t, base, d)
		})
	}
}

// TestFileIndexRoundTrip: an encoded index decodes to the metadata and
// sums it was made of, negative times (before 1970) and large values
// included; every regular file is in it, those not full or not old enough
// with their size and sum only.
func TestFileIndexRoundTrip(t *testing.T) {
	const cutoff = int64(1) << 61
	entries := []digestEntry{
		{path: "a", kind: 'd'},
		{path: "a/f", kind: 'f', stat: fileStat{size: 7, mtime: -1_000_000_123, ctime: 5, ino: 1 << 63, dev: 3, full: true}, sum: [32]byte{1}},
		{path: "a/g", kind: 'f', stat: fileStat{size: 1 << 40, mtime: cutoff - 1, ctime: 0, ino: 9, dev: 0, full: true}, sum: [32]byte{2}},
		{path: "a/racy", kind: 'f', stat: fileStat{size: 1, mtime: cutoff, ctime: 1, full: true}},
		{path: "a/sizeonly", kind: 'f', stat: fileStat{size: 1}},
		{path: "l", kind: 'l', target: "a/f"},
	}
	got := decodeFileIndex(encodeFileIndex(entries, cutoff))
	require.Equal(t, FileIndex{
		"a/f":        {stat: entries[1].stat, sum: entries[1].sum},
		"a/g":        {stat: entries[2].stat, sum: entries[2].sum},
		"a/racy":     {stat: fileStat{size: 1, full: true}},
		"a/sizeonly": {stat: fileStat{size: 1, full: true}},
	}, got)
}

// TestDigestIgnoresTimes: without a listing too, the digest depends on
// content and relative paths only — the same bytes copied elsewhere with
// other modification times have the same digest — while the times, which
// order retried attempts there, are digested apart (Times).
func TestDigestIgnoresTimes(t *testing.T) {
	write := func(t *testing.T, when time.Time) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "bmk_a"), 0o755))
		f := filepath.Join(dir, "bmk_a", "a.json")
		require.NoError(t, os.WriteFile(f, []byte(`{"conc": 4}`), 0o644))
		require.NoError(t, os.Chtimes(f, when, when))
		return dir
	}
	times := func(t *testing.T, dir string) []byte {
		d := StartDigest(context.Background(), dir)
		_, _, err := d.Wait(context.Background())
		require.NoError(t, err)
		return d.Times()
	}
	a, b := write(t, time.Now().Add(-time.Hour)), write(t, time.Now().Add(-2*time.Hour))
	da, _, _ := treeDigest(t, a, nil)
	db, _, _ := treeDigest(t, b, nil)
	require.Equal(t, da, db, "modification times entered the tree digest")
	require.NotNil(t, times(t, a))
	require.NotEqual(t, times(t, a), times(t, b))

	require.NoError(t, os.WriteFile(filepath.Join(a, ListingFile), []byte(`{"artifacts": []}`), 0o644))
	require.Nil(t, times(t, a), "a tree with a listing orders attempts by it, not by times")
}
