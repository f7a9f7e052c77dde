package source

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// backend opens the regular files of one artifact. servedFS only asks it
// for names it has already validated.
type backend interface {
	openFile(name string) (fs.File, error)
	statFile(name string) (fs.FileInfo, error)
	statDir(name string) (fs.FileInfo, error)
}

// servedFS is a read-only fs.FS over a fixed set of validated files: it
// serves exactly those files and the directories that lead to them, and
// nothing else the container may hold.
type servedFS struct {
	files []string // sorted, as Artifact.Files
	// dirs maps each directory to its sorted child base names; it is nil
	// when every file is at the root (most artifacts: one or a few files).
	dirs    map[string][]string
	backend backend
}

var (
	_ fs.ReadDirFS = (*servedFS)(nil)
	_ fs.StatFS    = (*servedFS)(nil)
)

// newServedFS serves files, which must be sorted and distinct (as
// Artifact.Files are) and are kept, not copied.
func newServedFS(files []string, b backend) *servedFS {
	s := &servedFS{files: files, backend: b}
	if !slices.ContainsFunc(files, func(f string) bool { return strings.IndexByte(f, '/') >= 0 }) {
		return s // every file at the root: files are the root's children
	}
	s.dirs = make(map[string][]string)
	sets := map[string]map[string]struct{}{".": {}}
	for _, f := range files {
		// Register f in its parent, and each new parent in its own parent;
		// a parent seen before has its chain registered already.
		for child := f; child != "."; child = path.Dir(child) {
			parent := path.Dir(child)
			set, known := sets[parent]
			if !known {
				set = make(map[string]struct{})
				sets[parent] = set
			}
			set[path.Base(child)] = struct{}{}
			if known {
				break
			}
		}
	}
	for dir, set := range sets {
		s.dirs[dir] = slices.Sorted(maps.Keys(set))
	}
	return s
}

func (s *servedFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if children, ok := s.children(name); ok {
		info, err := s.backend.statDir(name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &servedDir{fs: s, name: name, info: info, children: children}, nil
	}
	if !s.isFile(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := s.backend.openFile(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// children returns the sorted child base names of the directory name.
func (s *servedFS) children(name string) ([]string, bool) {
	if s.dirs == nil {
		return s.files, name == "."
	}
	c, ok := s.dirs[name]
	return c, ok
}

// isFile reports whether name is one of the files served.
func (s *servedFS) isFile(name string) bool {
	_, ok := slices.BinarySearch(s.files, name)
	return ok
}

func (s *servedFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	info, err := s.stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return info, nil
}

func (s *servedFS) stat(name string) (fs.FileInfo, error) {
	if _, ok := s.children(name); ok {
		return s.backend.statDir(name)
	}
	if s.isFile(name) {
		return s.backend.statFile(name)
	}
	return nil, fs.ErrNotExist
}

func (s *servedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	children, ok := s.children(name)
	if !ok {
		err := fs.ErrNotExist
		if s.isFile(name) {
			err = errNotDir
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return s.entries(name, children)
}

func (s *servedFS) entries(dir string, children []string) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(children))
	for _, c := range children {
		info, err := s.stat(path.Join(dir, c))
		if err != nil {
			return out, &fs.PathError{Op: "readdir", Path: dir, Err: err}
		}
		out = append(out, fs.FileInfoToDirEntry(info))
	}
	return out, nil
}

var (
	errNotDir = errors.New("not a directory")
	errIsDir  = errors.New("is a directory")
)

// servedDir is an open directory of a servedFS.
type servedDir struct {
	fs       *servedFS
	name     string
	info     fs.FileInfo
	children []string
	offset   int
}

func (d *servedDir) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *servedDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errIsDir}
}

func (d *servedDir) Close() error { return nil }

func (d *servedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.children[d.offset:]
	if n > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(n, len(rest))]
	}
	entries, err := d.fs.entries(d.name, rest)
	d.offset += len(entries)
	return entries, err
}

// dirInfo describes a directory that has no metadata of its own (a zip's
// implicit parent directories, and every zip directory for consistency).
type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }
