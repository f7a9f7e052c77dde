//go:build unix

package source

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDirArtifactOddEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	art := filepath.Join(dir, "eval_x")
	writeFile(t, filepath.Join(art, "meta_env.json"), "{}")
	writeFile(t, filepath.Join(art, `back\slash.json`), "{}")
	writeFile(t, filepath.Join(art, "new\nline.json"), "{}")
	writeFile(t, filepath.Join(art, `bad\dir`, "inside.json"), "{}")
	require.NoError(t, syscall.Mkfifo(filepath.Join(art, "pipe"), 0o644))

	tree := openTree(t, dir)
	a := tree.Artifact("eval_x")
	require.NoError(t, a.Err)
	require.Equal(t, []string{"meta_env.json"}, a.Files)
	require.Equal(t, int64(2), a.Size)
	require.Equal(t, []Problem{
		{Artifact: "eval_x", File: `"new\nline.json"`, Reason: "control character in name"},
		{Artifact: "eval_x", File: `back\slash.json`, Reason: "backslash in name"},
		{Artifact: "eval_x", File: `bad\dir`, Reason: "backslash in name"},
		{Artifact: "eval_x", File: "pipe", Reason: "not a regular file: named pipe"},
	}, a.Problems)
	fsys := artifactFS(t, tree, "eval_x")
	_, err := fs.Stat(fsys, "pipe")
	require.ErrorIs(t, err, fs.ErrNotExist)
}
