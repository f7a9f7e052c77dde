//go:build linux

package source

import (
	"io/fs"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openRootFolder opens the tree's root for subFolder, or returns nil where
// the kernel refuses openat2 with the resolution flags fdFolder relies on
// (Linux 5.6+; some sandboxes refuse it). Artifacts stay usable after
// Tree.Close (each is opened again on its next use), so the descriptor is
// closed once nothing refers to the folder any more, not by Close.
func openRootFolder(dir string) *fdFolder {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return nil
	}
	f := &fdFolder{fd: fd}
	runtime.AddCleanup(f, func(fd int) { unix.Close(fd) }, fd)
	return f
}

// subFolder serves a folder at the tree's root through the root's
// descriptor: a folder whose listing came from the digest's walk
// (walkListing) needs no descriptor of its own, which saves opening and
// closing one per artifact. Paths are resolved beneath the root without
// crossing a link (the folder itself included), as fdFolder does; what it
// serves and the errors it gives are those of the folder's own fdFolder;
// like that descriptor, it serves nothing once its closer ran (Release).
type subFolder struct {
	root   *fdFolder
	name   string       // the folder's name at the root
	closed *atomic.Bool // set by its subFolderCloser
}

// openSubFolder serves the folder name at the tree's root.
func openSubFolder(root *fdFolder, name string) *openedArtifact {
	closed := new(atomic.Bool)
	return &openedArtifact{backend: subFolder{root: root, name: name, closed: closed}, closer: subFolderCloser{closed}}
}

func (s subFolder) openFile(name string) (fs.File, error) {
	if s.closed.Load() {
		return nil, fs.ErrClosed
	}
	return s.root.openFile(s.name + "/" + name)
}

func (s subFolder) statFile(name string) (fs.FileInfo, error) {
	if s.closed.Load() {
		return nil, fs.ErrClosed
	}
	return s.root.statFile(s.name + "/" + name)
}

func (s subFolder) statDir(name string) (fs.FileInfo, error) {
	if s.closed.Load() {
		return nil, fs.ErrClosed
	}
	if name != "." {
		return s.root.statDir(s.name + "/" + name)
	}
	st, err := s.root.lstat(s.name)
	if err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, errNotDir
	}
	return statInfo(".", st), nil // named as the folder's own "." is
}

// subFolderCloser closes a subFolder: the root's descriptor stays open
// for the others.
type subFolderCloser struct{ closed *atomic.Bool }

func (c subFolderCloser) Close() error {
	c.closed.Store(true)
	return nil
}
