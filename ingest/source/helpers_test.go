package source

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// zipEntry is one entry of a zip built by a test. A zero mode is a
// regular file (or a directory when the name ends in "/").
type zipEntry struct {
	name  string
	body  string
	mode  fs.FileMode
	store bool // no compression, so tests can corrupt the bytes
	// unixMode, when set, is written as the raw Unix mode (S_IF* bits
	// included), for modes fs.FileMode cannot express.
	unixMode uint32
	flags    uint16 // extra general purpose flags
}

// zipBytes builds a zip in memory. archive/zip's writer does not validate
// names, so hostile entries can be written as they are.
func zipBytes(t *testing.T, entries []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)}
		if e.store {
			h.Method = zip.Store
		}
		switch {
		case e.mode != 0:
			h.SetMode(e.mode)
		case len(e.name) > 0 && e.name[len(e.name)-1] == '/':
			h.SetMode(fs.ModeDir | 0o755)
		default:
			h.SetMode(0o644)
		}
		if e.unixMode != 0 {
			h.CreatorVersion = 3<<8 | 20 // made by Unix, zip 2.0
			h.ExternalAttrs = e.unixMode << 16
		}
		h.Flags |= e.flags
		fw, err := w.CreateHeader(h)
		require.NoError(t, err)
		_, err = fw.Write([]byte(e.body))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func writeZip(t *testing.T, path string, entries []zipEntry) []byte {
	t.Helper()
	data := zipBytes(t, entries)
	writeFile(t, path, string(data))
	return data
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// openTree opens dir and closes the tree when the test ends.
func openTree(t *testing.T, dir string) *Tree {
	t.Helper()
	tree, err := Open(context.Background(), dir, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tree.Close()) })
	require.NoError(t, tree.LoadAll(context.Background()))
	return tree
}

// artifactFS returns the named artifact's FS, failing the test otherwise.
func artifactFS(t *testing.T, tree *Tree, name string) fs.FS {
	t.Helper()
	a := tree.Artifact(name)
	require.NotNil(t, a, "artifact %s", name)
	require.NoError(t, a.Err)
	fsys, err := a.FS()
	require.NoError(t, err)
	return fsys
}

func readString(t *testing.T, fsys fs.FS, name string) string {
	t.Helper()
	data, err := fs.ReadFile(fsys, name)
	require.NoError(t, err)
	return string(data)
}
