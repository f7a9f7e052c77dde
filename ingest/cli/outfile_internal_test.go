package cli

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// outOpt is an output option whose value is path, given as --out.
func outOpt(path string) *setting { return &setting{name: "out", value: path} }

// writeBytes is the fn of writeOutput that writes b.
func writeBytes(b string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, b)
		return err
	}
}

// dirNames are the names in dir (a temporary file left behind shows here).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteOutputDash(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	require.NoError(t, writeOutput(Env{Stdout: &stdout}, outOpt("-"), writeBytes("to stdout")))
	require.Equal(t, "to stdout", stdout.String())
}

// TestWriteOutputRegularFile: an existing file is replaced by a new one
// (another inode: a reader never sees it half written) that keeps its
// mode; a new file is 0644; a failed write leaves the old file whole; no
// temporary file stays behind.
func TestWriteOutputRegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	env := Env{Stdout: io.Discard}

	require.NoError(t, writeOutput(env, outOpt(path), writeBytes("first")))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o644), info.Mode().Perm())

	require.NoError(t, os.Chmod(path, 0o600))
	before, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, writeOutput(env, outOpt(path), writeBytes("second")))
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.False(t, os.SameFile(before, after), "the file was written in place, not replaced")
	require.Equal(t, fs.FileMode(0o600), after.Mode().Perm(), "the mode of the replaced file is kept")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "second", string(got))

	boom := errors.New("boom")
	err = writeOutput(env, outOpt(path), func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "second", string(got), "a failed write changed the file")
	require.Equal(t, []string{"summary.json"}, dirNames(t, dir), "a temporary file stayed behind")

	missing := filepath.Join(dir, "missing", "x.json")
	err = writeOutput(env, outOpt(missing), writeBytes("x"))
	require.ErrorContains(t, err, "--out "+missing+": ")
}

// TestWriteOutputFIFO: a FIFO receives the bytes and stays a FIFO.
func TestWriteOutputFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("pipe", link))

	for _, path := range []string{fifo, link} {
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo) // blocks until the writer opens it
			if err != nil {
				got <- err.Error()
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- string(b)
		}()
		require.NoError(t, writeOutput(Env{Stdout: io.Discard}, outOpt(path), writeBytes("through "+path)))
		require.Equal(t, "through "+path, <-got)
		info, err := os.Lstat(fifo)
		require.NoError(t, err)
		require.Equal(t, fs.ModeNamedPipe, info.Mode().Type(), "the FIFO was replaced")
	}
	require.ElementsMatch(t, []string{"pipe", "link"}, dirNames(t, dir))
	target, err := os.Readlink(link)
	require.NoError(t, err)
	require.Equal(t, "pipe", target)
}

// fullDevice is a device that refuses every write with ENOSPC: a copy of
// /dev/full in a temporary directory where the test may create one (as
// root), else /dev/full itself (which a user who may not create a device
// cannot replace either).
func fullDevice(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		return "/dev/full"
	}
	return path
}

// TestWriteOutputFullDevice: a device that refuses the bytes is an error
// naming the option and the path, and the device stays a device.
func TestWriteOutputFullDevice(t *testing.T) {
	t.Parallel()
	dev := fullDevice(t)
	opt := &setting{name: "summary-json", value: dev, from: "INGEST_SUMMARY_JSON"}
	err := writeOutput(Env{Stdout: io.Discard}, opt, writeBytes("no room"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, "--summary-json (from INGEST_SUMMARY_JSON) "+dev+": ")
	info, err := os.Lstat(dev)
	require.NoError(t, err)
	require.Equal(t, fs.ModeDevice|fs.ModeCharDevice, info.Mode().Type(), "the device was replaced")
}

// TestWriteOutputSymlink: a symlink to a regular file is written through
// (its target replaced, the link kept); a symlink to nothing and a
// directory are refused and left as they were.
func TestWriteOutputSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	require.NoError(t, os.Mkdir(data, 0o755))
	target := filepath.Join(data, "summary.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink("data/summary.json", link))
	env := Env{Stdout: io.Discard}

	require.NoError(t, writeOutput(env, outOpt(link), writeBytes("new")))
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	require.Equal(t, "data/summary.json", dest, "the symlink was replaced")
	require.Equal(t, []string{"summary.json"}, dirNames(t, data))

	dangling := filepath.Join(dir, "dangling.json")
	require.NoError(t, os.Symlink("nowhere/x.json", dangling))
	require.ErrorContains(t, writeOutput(env, outOpt(dangling), writeBytes("x")), "--out "+dangling+": a symlink to nothing")
	info, err := os.Lstat(dangling)
	require.NoError(t, err)
	require.Equal(t, fs.ModeSymlink, info.Mode().Type())

	require.ErrorIs(t, writeOutput(env, outOpt(data), writeBytes("x")), syscall.EISDIR)
	require.Equal(t, []string{"summary.json"}, dirNames(t, data), "the directory was written into")
}
