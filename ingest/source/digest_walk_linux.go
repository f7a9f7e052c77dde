//go:build linux

package source

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// On Linux the digest walks and hashes with raw system calls: a run holds
// thousands of one-file folders, and package os costs five more calls per
// file opened (four fcntl and a failing epoll registration) and an 8 KiB
// buffer per folder listed. The results are those of walkTreePortable and
// hashFilesPortable, errors included (the same operations and paths); only
// an entry swapped for a link while the digest runs is refused rather than
// followed.
//
// This walker and fdFolder/subFolder (dirfd_linux.go, subfolder_linux.go)
// are kept while they are worth more than 5 % of the first ingest against
// os.ReadDir and os.Root alone (the folder itself lstat'ed and compared
// with the opened root, which refuses a folder swapped for a link as
// well); the figure and the command are in docs/performance.md, "Current
// figures".

// hashBufSize is each hashing worker's read buffer: most of a run's files
// are read in one call.
const hashBufSize = 256 << 10

// walkTree lists dir (rel below the root) depth first, in name order.
// Folders are opened relative to their parent and never through a link;
// only regular files (and entries the folder gives no type for) are
// stat'ed.
func walkTree(dir, rel string, withTimes bool, out *[]digestEntry) error {
	return rawWalk{dir: dir, withTimes: withTimes, bufs: &direntBufs{}, out: out}.walk(rel)
}

// rawWalk is one walk of a tree through folder descriptors.
type rawWalk struct {
	dir       string // the folder walked, as given: errors name paths below it
	withTimes bool
	statAll   bool // stat every entry as if its folder gave no types (tests)
	bufs      *direntBufs
	out       *[]digestEntry
}

func (w rawWalk) walk(rel string) error {
	// The folder itself may be a link, as os.ReadDir would follow it.
	fd, err := openAt(unix.AT_FDCWD, w.dir, unix.O_DIRECTORY)
	if err != nil {
		return &fs.PathError{Op: "open", Path: w.dir, Err: err}
	}
	return w.list(fd, "", rel)
}

// list appends the entries of the folder open at fd, which is sub below
// w.dir and prefix below the root, and closes fd.
func (w rawWalk) list(fd int, sub, prefix string) error {
	defer unix.Close(fd)
	ents, err := readDirents(fd, w.bufs)
	if err != nil {
		return &fs.PathError{Op: "readdirent", Path: w.path(sub), Err: err}
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	for _, d := range ents {
		e := digestEntry{path: d.name}
		if prefix != "" {
			e.path = prefix + "/" + d.name
		}
		var st unix.Stat_t
		mode, stated := direntType(d.typ), false
		if mode == ^fs.FileMode(0) || w.statAll {
			if err := lstatAt(fd, d.name, &st); err != nil {
				if err == unix.ENOENT {
					continue // gone since listed: os.ReadDir leaves it out
				}
				return &fs.PathError{Op: "fstatat", Path: w.path(sub), Err: err}
			}
			mode, stated = statMode(st.Mode), true
		}
		if e.kind = entryKind(mode); e.kind == 'l' {
			if e.target, err = readlinkAt(fd, d.name); err != nil {
				return &fs.PathError{Op: "readlink", Path: w.path(sub, d.name), Err: err}
			}
		}
		if e.kind == 'f' {
			if !stated {
				if err := lstatAt(fd, d.name, &st); err != nil {
					return &fs.PathError{Op: "lstat", Path: w.path(sub) + "/" + d.name, Err: err}
				}
			}
			e.stat = statOfRaw(&st)
			if w.withTimes {
				e.mod = st.Mtim.Nano()
			}
		}
		*w.out = append(*w.out, e)
		if e.kind == 'd' {
			child, err := openAt(fd, d.name, unix.O_DIRECTORY|unix.O_NOFOLLOW)
			if err != nil {
				return &fs.PathError{Op: "open", Path: w.path(sub, d.name), Err: err}
			}
			if err := w.list(child, joinSub(sub, d.name), e.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// path is the path of sub (and name) below the walked folder, as the
// portable walk spells it.
func (w rawWalk) path(sub ...string) string {
	if len(sub) == 1 && sub[0] == "" {
		return w.dir
	}
	return filepath.Join(append([]string{w.dir}, sub...)...)
}

func joinSub(sub, name string) string {
	if sub == "" {
		return name
	}
	return sub + "/" + name
}

// direntType is the fs.FileMode type bits of a directory entry type as
// os.ReadDir reads it: ^0 when the folder does not say (the entry must be
// stat'ed).
func direntType(t uint8) fs.FileMode {
	switch t {
	case unix.DT_BLK, unix.DT_CHR, unix.DT_DIR, unix.DT_FIFO, unix.DT_LNK, unix.DT_REG, unix.DT_SOCK:
		return dtToMode(t)
	}
	return ^fs.FileMode(0)
}

// hashFiles fills in the sha256 of every regular file, a few files at a
// time: from known when it records the file with the metadata the walk
// read, else by reading it. Files are opened relative to the root, never
// through a link at their last component.
func hashFiles(ctx context.Context, root string, entries []digestEntry, known FileIndex) error {
	todo := unknownFiles(entries, known)
	// A root that does not open fails each file as opening it would.
	rootFd, rootErr := -1, error(nil)
	if len(todo) > 0 {
		if rootFd, rootErr = openAt(unix.AT_FDCWD, root, unix.O_DIRECTORY); rootErr == nil {
			defer unix.Close(rootFd)
		}
	}
	return hashEach(ctx, entries, todo, hashBufSize, func(e *digestEntry, buf []byte) error {
		if rootErr != nil {
			return &fs.PathError{Op: "open", Path: filepath.Join(root, e.path), Err: rootErr}
		}
		return hashFileAt(rootFd, root, e, buf)
	})
}

// hashFileAt reads one file, e.path below the folder open at rootFd (root),
// through sha256, as hashFile does.
func hashFileAt(rootFd int, root string, e *digestEntry, buf []byte) error {
	fd, err := openAt(rootFd, e.path, unix.O_NOFOLLOW)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Join(root, e.path), Err: err}
	}
	defer unix.Close(fd)
	h := sha256.New()
	var size int64
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "read", Path: filepath.Join(root, e.path), Err: err}
		}
		if n <= 0 {
			break
		}
		h.Write(buf[:n])
		size += int64(n)
	}
	if size != e.stat.size {
		e.stat = fileStat{size: size} // changed while read: never indexed
	}
	h.Sum(e.sum[:0])
	return nil
}

// openAt opens name below the folder open at dirFd (or the working
// directory) for reading, close-on-exec.
func openAt(dirFd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirFd, name, flags|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// lstatAt stats name in the folder open at dirFd without following a link.
func lstatAt(dirFd int, name string, st *unix.Stat_t) error {
	for {
		if err := unix.Fstatat(dirFd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != unix.EINTR {
			return err
		}
	}
}

// readlinkAt reads the target of the link name in the folder open at
// dirFd, growing its buffer as os.Readlink does.
func readlinkAt(dirFd int, name string) (string, error) {
	for size := 128; ; size *= 2 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(dirFd, name, b)
		for err == unix.EINTR {
			n, err = unix.Readlinkat(dirFd, name, b)
		}
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:max(n, 0)]), nil
		}
	}
}
