//go:build linux

package source

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRawWalkMatchesPortable: on varied trees the raw walk and hashing
// give exactly the entries, digest and index of the portable ones, with
// and without modification times, and with every entry stat'ed as on a
// file system whose folders give no entry types.
func TestRawWalkMatchesPortable(t *testing.T) {
	write := func(t *testing.T, name string, body []byte) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.WriteFile(name, body, 0o644))
	}
	for _, c := range []struct {
		name  string
		build func(t *testing.T, dir string) string // the root to digest
		kinds string                                // entry kinds the tree must hold
	}{
		{
			name: "names needing sort care",
			build: func(t *testing.T, dir string) string {
				// Depth first in name order: a, a/b, a-x, a.b (not a-x,
				// a.b, a/b as full paths would sort).
				for _, n := range []string{"a/b", "a-x", "a.b", "B", "Z", "_", "a0", "é", "日本/語", "e\u0301", "sp ace", "%41"} {
					write(t, filepath.Join(dir, n), []byte(n))
				}
				return dir
			},
			kinds: "df",
		},
		{
			name: "nested, empty folders and empty files",
			build: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "a/b/c/d/e/f/deep.json"), []byte(`{"deep": true}`))
				write(t, filepath.Join(dir, "a/b/empty.json"), nil)
				write(t, filepath.Join(dir, "z/empty"), nil)
				for _, d := range []string{"empty", "a/b/c/empty", "a/b/c/d/e/f/g"} {
					require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
				}
				// Access, modification and change times all differ.
				atime, mtime := time.Date(2021, 1, 2, 3, 4, 5, 6, time.UTC), time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC)
				require.NoError(t, os.Chtimes(filepath.Join(dir, "a/b/c/d/e/f/deep.json"), atime, mtime))
				return dir
			},
			kinds: "df",
		},
		{
			name: "links and a named pipe",
			build: func(t *testing.T, dir string) string {
				outside := t.TempDir()
				write(t, filepath.Join(outside, "secret"), []byte("outside"))
				write(t, filepath.Join(dir, "sub/file.json"), []byte(`[]`))
				for name, target := range map[string]string{
					"to-file":     "sub/file.json",
					"to-folder":   "sub",
					"sub/up":      "..",
					"to-outside":  filepath.Join(outside, "secret"),
					"outside-dir": outside,
					"dangling":    "no/such/file",
					"long":        strings.Repeat("x/", 200) + "end", // beyond readlink's first buffer
				} {
					require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
				}
				require.NoError(t, unix.Mkfifo(filepath.Join(dir, "sub/pipe"), 0o644))
				return dir
			},
			kinds: "dflo",
		},
		{
			name: "files around the read buffers",
			build: func(t *testing.T, dir string) string {
				for _, n := range []int{0, 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, hashBufSize - 1, hashBufSize, hashBufSize + 1, 3*hashBufSize + 17} {
					body := bytes.Repeat([]byte{byte(n), byte(n >> 8), 'q'}, n/3+1)[:n]
					write(t, filepath.Join(dir, "sizes", strings.Repeat("n", 1+n%7)+"-"+time.Duration(n).String()), body)
				}
				return dir
			},
			kinds: "df",
		},
		{
			name: "root reached through a link",
			build: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "real/bmk_a/a.json"), []byte(`{"conc": 4}`))
				require.NoError(t, os.Symlink("real", filepath.Join(dir, "root")))
				return filepath.Join(dir, "root")
			},
			kinds: "df",
		},
		{
			name: "generated run",
			build: func(t *testing.T, dir string) string {
				_, err := generate.Write(dir, generate.Options{Points: 40, Evals: 4, EvalDocs: 2, Seed: 1})
				require.NoError(t, err)
				return dir
			},
			kinds: "df",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := c.build(t, t.TempDir())
			for _, withTimes := range []bool{false, true} {
				for _, statAll := range []bool{false, true} {
					var want, got []digestEntry
					require.NoError(t, walkTreePortable(root, "", withTimes, &want))
					require.NoError(t, rawWalk{dir: root, withTimes: withTimes, statAll: statAll, bufs: &direntBufs{}, out: &got}.walk(""))
					require.Equal(t, want, got, "walk, withTimes %v, statAll %v", withTimes, statAll)
					for _, k := range c.kinds {
						require.True(t, hasKind(got, byte(k)), "no entry of kind %c", k)
					}

					require.NoError(t, hashFilesPortable(context.Background(), root, want, nil))
					require.NoError(t, hashFiles(context.Background(), root, got, nil))
					require.Equal(t, want, got, "hashed")
					require.Equal(t, combine(want), combine(got))
					cut := time.Now().Add(time.Hour).UnixNano()
					require.Equal(t, encodeFileIndex(want, cut), encodeFileIndex(got, cut))
				}
			}
			// walkTree is the raw walk, and spells paths below rel.
			var want, got []digestEntry
			require.NoError(t, walkTreePortable(root, "pre", false, &want))
			require.NoError(t, walkTree(root, "pre", false, &got))
			require.Equal(t, want, got)
		})
	}
}

func hasKind(entries []digestEntry, kind byte) bool {
	for _, e := range entries {
		if e.kind == kind {
			return true
		}
	}
	return false
}

// TestRawWalkFailsAsPortable: where the portable walk or hashing fails,
// the raw one fails with the same message, and a file that changed size
// while read is not indexed by either.
func TestRawWalkFailsAsPortable(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	for _, root := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "file")} {
		var e []digestEntry
		want := walkTreePortable(root, "", false, &e)
		require.Error(t, want)
		require.EqualError(t, walkTree(root, "", false, &e), want.Error())
	}

	for _, change := range []struct {
		name   string
		change func(t *testing.T, name string)
		err    bool
	}{
		{"removed", func(t *testing.T, name string) { require.NoError(t, os.Remove(name)) }, true},
		{"root removed", func(t *testing.T, name string) { require.NoError(t, os.RemoveAll(filepath.Dir(filepath.Dir(name)))) }, true},
		{"root replaced by a file", func(t *testing.T, name string) {
			root := filepath.Dir(filepath.Dir(name))
			require.NoError(t, os.RemoveAll(root))
			require.NoError(t, os.WriteFile(root, nil, 0o644))
		}, true},
		{"grown", func(t *testing.T, name string) { require.NoError(t, os.WriteFile(name, []byte("longer"), 0o644)) }, false},
		{"shrunk", func(t *testing.T, name string) { require.NoError(t, os.WriteFile(name, nil, 0o644)) }, false},
	} {
		t.Run(change.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "sub", "f.json")
			require.NoError(t, os.Mkdir(filepath.Dir(name), 0o755))
			require.NoError(t, os.WriteFile(name, []byte("four"), 0o644))
			var want, got []digestEntry
			require.NoError(t, walkTreePortable(dir, "", false, &want))
			require.NoError(t, walkTree(dir, "", false, &got))
			change.change(t, name)
			wantErr := hashFilesPortable(context.Background(), dir, want, nil)
			gotErr := hashFiles(context.Background(), dir, got, nil)
			if change.err {
				require.Error(t, wantErr)
				require.EqualError(t, gotErr, wantErr.Error())
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, gotErr)
			require.Equal(t, want, got)
			require.False(t, got[1].stat.full, "a file that changed while read keeps its metadata")
			for path, f := range decodeFileIndex(encodeFileIndex(got, time.Now().Add(time.Hour).UnixNano())) {
				require.Equal(t, fileStat{size: f.stat.size, full: true}, f.stat, "%s: a file that changed while read is trusted", path)
			}
		})
	}
}

// TestRawHashStopsWithItsContext: hashing under a cancelled context fails
// with its cause, as the portable hashing does, even when no file is left
// to read.
func TestRawHashStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.json"), []byte("{}"), 0o644))
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stopped")
	cancel(cause)
	var entries []digestEntry
	require.NoError(t, walkTree(dir, "", false, &entries))
	require.NoError(t, hashFiles(context.Background(), dir, entries, nil))
	all := decodeFileIndex(encodeFileIndex(entries, time.Now().Add(time.Hour).UnixNano()))
	require.Len(t, all, 1)
	for _, known := range []FileIndex{nil, all} {
		require.ErrorIs(t, hashFilesPortable(ctx, dir, slices.Clone(entries), known), cause)
		require.ErrorIs(t, hashFiles(ctx, dir, slices.Clone(entries), known), cause)
	}
}
