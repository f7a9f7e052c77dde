package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeOutput writes what fn produces to the path an output option names
// (--out, --summary-json, --unmapped-output), by what the path is:
//
//   - "-": standard output (env.Stdout).
//   - a regular file, or nothing yet: a temporary file in the same
//     directory, renamed over the path once complete, so a reader sees the
//     old file or the whole new one and a failed write leaves the old file
//     as it was. A symlink to a regular file is written through: its
//     target is replaced, the link stays.
//   - anything else the path leads to (a device, a FIFO, a socket,
//     /dev/stdout, a directory, or a symlink to one of these): opened for
//     writing and written into, never replaced. A device that refuses the
//     bytes (/dev/full) is an error; what a FIFO or device took before a
//     failure cannot be taken back.
//
// A symlink to nothing is refused rather than replaced by a file. Errors
// name the option (and the variable it came from) and the path.
func writeOutput(env Env, opt *setting, fn func(io.Writer) error) error {
	path := opt.String()
	if err := writeOutputPath(env, path, fn); err != nil {
		return fmt.Errorf("%s %s: %w", opt.label(), path, err)
	}
	return nil
}

func writeOutputPath(env Env, path string, fn func(io.Writer) error) error {
	if path == "-" {
		return fn(env.Stdout)
	}
	info, err := os.Stat(path) // follows symlinks, /proc's included
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if l, lerr := os.Lstat(path); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
			return errors.New("a symlink to nothing: not written")
		}
		return replaceFile(path, 0o644, fn)
	case err != nil:
		return err
	case info.Mode().IsRegular():
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return replaceFile(target, info.Mode().Perm(), fn)
	}
	// O_WRONLY alone: no O_CREATE (it exists), no O_TRUNC (meaningless
	// for a device or a FIFO); a directory or a socket refuses to open.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceFile writes a temporary file beside path with mode perm and
// renames it over path once fn wrote it whole and it is on disk.
func replaceFile(path string, perm fs.FileMode, fn func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil { // CreateTemp makes it private
		return err
	}
	if err = fn(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
