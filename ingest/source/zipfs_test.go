package source

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostileZipEntries(t *testing.T) {
	t.Parallel()
	good := zipEntry{name: "good.json", body: `{"ok":true}`}
	tests := []struct {
		name      string
		entries   []zipEntry
		wantFiles []string
		want      []Problem // Artifact is filled in by the test
	}{
		{
			name:      "absolute",
			entries:   []zipEntry{good, {name: "/etc/passwd", body: "root"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "/etc/passwd", Reason: "absolute path"}},
		},
		{
			name:      "drive letter",
			entries:   []zipEntry{good, {name: "C:/Windows/evil.dll", body: "x"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "C:/Windows/evil.dll", Reason: "absolute path"}},
		},
		{
			name:      "dot dot",
			entries:   []zipEntry{good, {name: "../evil.json", body: "x"}, {name: "a/../../evil.json", body: "x"}},
			wantFiles: []string{"good.json"},
			want: []Problem{
				{File: "../evil.json", Reason: `".." path element`},
				{File: "a/../../evil.json", Reason: `".." path element`},
			},
		},
		{
			name:      "backslash",
			entries:   []zipEntry{good, {name: `..\evil.json`, body: "x"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: `..\evil.json`, Reason: "backslash in name"}},
		},
		{
			name:      "symlink",
			entries:   []zipEntry{good, {name: "link.json", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "link.json", Reason: "symbolic link rejected"}},
		},
		{
			name:      "symlink directory",
			entries:   []zipEntry{good, {name: "up/", unixMode: 0o120777}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "up/", Reason: "symbolic link rejected"}},
		},
		{
			name:      "named pipe",
			entries:   []zipEntry{good, {name: "fifo", mode: fs.ModeNamedPipe | 0o644}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "fifo", Reason: "not a regular file: named pipe"}},
		},
		{
			name:      "encrypted",
			entries:   []zipEntry{good, {name: "secret.json", body: "x", flags: 0x1}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "secret.json", Reason: "encrypted entry rejected"}},
		},
		{
			name:      "duplicate",
			entries:   []zipEntry{good, {name: "dup.json", body: "first"}, {name: "dup.json", body: "second"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "dup.json", Reason: "duplicate entry name (2 entries): none served"}},
		},
		{
			name:      "NUL byte",
			entries:   []zipEntry{good, {name: "evil.json\x00.txt", body: "x"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: `"evil.json\x00.txt"`, Reason: "NUL byte in name"}},
		},
		{
			name:      "empty and dot names",
			entries:   []zipEntry{good, {name: "", body: "x"}, {name: "./", body: ""}, {name: "a//b", body: "x"}},
			wantFiles: []string{"good.json"},
			want: []Problem{
				{File: "", Reason: "empty name"},
				{File: "./", Reason: `name is "."`},
				{File: "a//b", Reason: `non-canonical path (empty or "." element)`},
			},
		},
		{
			name:      "absolute directory",
			entries:   []zipEntry{good, {name: "/"}},
			wantFiles: []string{"good.json"},
			want:      []Problem{{File: "/", Reason: "absolute path"}},
		},
		{
			name:      "file named like a directory",
			entries:   []zipEntry{good, {name: "x", body: "file"}, {name: "x/y.json", body: "nested"}},
			wantFiles: []string{"good.json", "x/y.json"},
			want:      []Problem{{File: "x", Reason: "file has the name of a directory: not served"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeZip(t, filepath.Join(dir, "bmk_x.zip"), tt.entries)
			tree := openTree(t, dir)
			a := tree.Artifact("bmk_x")
			require.NotNil(t, a)
			require.NoError(t, a.Err)
			require.Equal(t, tt.wantFiles, a.Files)
			for i := range tt.want {
				tt.want[i].Artifact = "bmk_x"
			}
			require.Equal(t, tt.want, a.Problems)

			fsys := artifactFS(t, tree, "bmk_x")
			require.Equal(t, `{"ok":true}`, readString(t, fsys, "good.json"))
			served := map[string]bool{}
			require.NoError(t, fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if !d.IsDir() {
					served[p] = true
				}
				return nil
			}))
			require.Len(t, served, len(tt.wantFiles))
			for _, f := range tt.wantFiles {
				require.True(t, served[f], f)
			}
			for _, e := range tt.entries {
				if !served[e.name] && fs.ValidPath(e.name) && e.name != "." {
					// Never served as a file; "x" is still the directory of x/y.json.
					info, err := fs.Stat(fsys, e.name)
					if err == nil {
						require.True(t, info.IsDir(), e.name)
						continue
					}
					require.ErrorIs(t, err, fs.ErrNotExist, e.name)
				}
			}
		})
	}
}

func TestTruncatedZip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := zipBytes(t, []zipEntry{{name: "agg.json", body: `{"conc":64}`}, {name: "b.json", body: "{}"}})
	writeFile(t, filepath.Join(dir, "bmk_cut.zip"), string(data[:len(data)/2]))

	tree := openTree(t, dir)
	a := tree.Artifact("bmk_cut")
	require.NotNil(t, a)
	require.Error(t, a.Err)
	require.Contains(t, a.Err.Error(), "artifact bmk_cut: unreadable zip (truncated or corrupt)")
	require.Empty(t, a.Files)
	require.Equal(t, int64(len(data)/2), a.Size)
	_, err := a.FS()
	require.ErrorIs(t, err, a.Err)
}

func TestCorruptEntrySurfacesOnRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := "0123456789abcdef-payload-that-will-be-corrupted"
	data := zipBytes(t, []zipEntry{
		{name: "ok.json", body: `{"fine":1}`, store: true},
		{name: "bad.json", body: body, store: true},
	})
	i := bytes.Index(data, []byte(body))
	require.Positive(t, i)
	data[i+3] ^= 0xff
	writeFile(t, filepath.Join(dir, "bmk_crc.zip"), string(data))

	tree := openTree(t, dir)
	a := tree.Artifact("bmk_crc")
	require.NoError(t, a.Err)
	require.Equal(t, []string{"bad.json", "ok.json"}, a.Files)
	fsys := artifactFS(t, tree, "bmk_crc")
	require.Equal(t, `{"fine":1}`, readString(t, fsys, "ok.json"))
	_, err := fs.ReadFile(fsys, "bad.json")
	require.ErrorIs(t, err, zip.ErrChecksum)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "bad.json", pe.Path)
}

func TestZipChangedAfterOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bmk_x.zip")
	writeZip(t, path, []zipEntry{{name: "a.json", body: "{}"}})
	tree := openTree(t, dir)
	writeZip(t, path, []zipEntry{{name: "a.json", body: "{}"}, {name: "b.json", body: "{}"}})
	_, err := tree.Artifact("bmk_x").FS()
	require.ErrorContains(t, err, "artifact bmk_x: zip changed since it was opened")
}
