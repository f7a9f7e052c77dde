//go:build linux

package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// fdFolder serves a folder artifact through raw file descriptors and
// openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS: the kernel refuses
// any path that leaves the folder or crosses a link. It exists for speed: a
// run holds thousands of one-file folders, and os.File's bookkeeping costs
// five system calls per open on top of the open itself.
type fdFolder struct {
	fd int
}

// openFdFolder opens a folder without following a link at its last
// component. ok is false when the fast path is off; callers then use
// os.Root.
func openFdFolder(dir string, fast bool) (f *fdFolder, ok bool, err error) {
	if !fast {
		return nil, false, nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, true, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &fdFolder{fd: fd}, true, nil
}

const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

func (f *fdFolder) Close() error {
	if f.fd < 0 {
		return fs.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

func (f *fdFolder) open(name string, flags uint64) (int, error) {
	for {
		fd, err := unix.Openat2(f.fd, name, &unix.OpenHow{Flags: flags | unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: beneath})
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// list reports every regular file of the folder with its size, and
// rejects links, special files, bad names and unreadable directories, as
// loadDir's walk over an os.Root does (without following anything).
func (f *fdFolder) list(bufs *direntBufs, reject func(name, reason string), add func(name string, size int64)) error {
	return f.listDir(bufs, ".", reject, add)
}

func (f *fdFolder) listDir(bufs *direntBufs, dir string, reject func(name, reason string), add func(name string, size int64)) error {
	fd, err := f.fd, error(nil) // the folder itself is listed through its own descriptor
	if dir != "." {
		fd, err = f.open(dir, unix.O_DIRECTORY)
		if err == nil {
			defer unix.Close(fd)
		}
	}
	var entries []dirent
	if err == nil {
		entries, err = readDirents(fd, bufs)
	}
	if err != nil {
		if dir == "." {
			return err
		}
		reject(dir, fmt.Sprintf("unreadable: %v", err))
		return nil
	}
	for _, e := range entries {
		name := e.name
		if dir != "." {
			name = dir + "/" + e.name
		}
		if reason := entryNameProblem(name); reason != "" {
			reject(name, reason)
			continue
		}
		mode, size := dtToMode(e.typ), int64(0)
		if e.typ == unix.DT_REG || e.typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				reject(name, fmt.Sprintf("unreadable: %v", err))
				continue
			}
			mode, size = statMode(st.Mode), st.Size
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			reject(name, "symbolic link rejected")
		case mode.IsDir():
			if err := f.listDir(bufs, name, reject, add); err != nil {
				return err
			}
		case !mode.IsRegular():
			reject(name, notRegular(mode))
		default:
			add(name, size)
		}
	}
	return nil
}

type dirent struct {
	name string
	typ  uint8
}

// readDirents reads every entry of a directory (but . and ..), sorted by
// nothing in particular.
func readDirents(fd int, bufs *direntBufs) ([]dirent, error) {
	var out []dirent
	bp := bufs.get()
	defer bufs.put(bp)
	buf := bp[:]
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return nil, errors.New("malformed directory entry")
			}
			typ := buf[off+18]
			nameBytes := buf[off+19 : off+reclen]
			for i, c := range nameBytes {
				if c == 0 {
					nameBytes = nameBytes[:i]
					break
				}
			}
			if name := string(nameBytes); name != "." && name != ".." {
				out = append(out, dirent{name: name, typ: typ})
			}
			off += reclen
		}
	}
}

// statMode is the fs.FileMode type bits of a stat(2) mode.
func statMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// dtToMode is the fs.FileMode type bits of a directory entry type: on
// Linux a DT_* value is the S_IF* type shifted right by 12 (DTTOIF).
func dtToMode(t uint8) fs.FileMode { return statMode(uint32(t) << 12) }

// backend implementation: files are opened beneath the folder, never
// through a link, and served only while they are regular files.

func (f *fdFolder) openFile(name string) (fs.File, error) {
	fd, err := f.open(name, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, errors.New(notRegular(statMode(st.Mode)))
	}
	return &fdFile{fd: fd, info: statInfo(path.Base(name), &st)}, nil
}

func (f *fdFolder) lstat(name string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if name == "." {
		if err := unix.Fstat(f.fd, &st); err != nil {
			return nil, err
		}
		return &st, nil
	}
	fd, err := f.open(path.Dir(name), unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Fstatat(fd, path.Base(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return &st, nil
}

func (f *fdFolder) statFile(name string) (fs.FileInfo, error) {
	st, err := f.lstat(name)
	if err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errors.New(notRegular(statMode(st.Mode)))
	}
	return statInfo(path.Base(name), st), nil
}

func (f *fdFolder) statDir(name string) (fs.FileInfo, error) {
	st, err := f.lstat(name)
	if err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, errNotDir
	}
	return statInfo(path.Base(name), st), nil
}

// fdFile is an open regular file read with plain read(2).
type fdFile struct {
	fd   int
	info fs.FileInfo
}

func (f *fdFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *fdFile) Read(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, fs.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.info.Name(), Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *fdFile) Close() error {
	if f.fd < 0 {
		return fs.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

type statFileInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func statInfo(name string, st *unix.Stat_t) fs.FileInfo {
	return statFileInfo{name: name, size: st.Size, mode: statMode(st.Mode) | fs.FileMode(st.Mode&0o777),
		mod: time.Unix(st.Mtim.Unix())}
}

func (i statFileInfo) Name() string       { return i.name }
func (i statFileInfo) Size() int64        { return i.size }
func (i statFileInfo) Mode() fs.FileMode  { return i.mode }
func (i statFileInfo) ModTime() time.Time { return i.mod }
func (i statFileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i statFileInfo) Sys() any           { return nil }
