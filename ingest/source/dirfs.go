package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// loadDir fills a folder artifact. On Linux the folder is listed and
// served through openat2 beneath it (see fdFolder) — or, when the tree's
// digest walked it clean, takes the walk's listing and is served beneath
// the tree's root (see subFolder); elsewhere, or where openat2 is
// refused, through an os.Root. Either way nothing outside the
// folder is reached, and symbolic links and other non-regular files are
// Problems, never served or followed. With keepOpen the open folder is
// returned for FS to serve from.
func loadDir(a *Artifact, listing []schema.ArtifactListing, keepOpen bool) *openedArtifact {
	a.Listing = matchListing(a.Name, "", listing)
	var problems []Problem
	reject := func(name, reason string) {
		problems = append(problems, Problem{Artifact: a.Name, File: displayName(name), Reason: reason})
	}
	add := func(name string, size int64) {
		a.Files = append(a.Files, name)
		a.Size += size
	}
	var walked *walkListing
	if s := a.sink.Load(); s != nil {
		walked = s.listing
	}
	folder, err := listFolder(a.Path, a.dirents, walked, a.root, reject, add)
	if err != nil {
		a.Files, a.Size = nil, 0
		a.Err = fmt.Errorf("artifact %s: list folder: %w", a.Name, err)
		return nil
	}
	slices.Sort(a.Files)
	sortProblems(problems)
	a.Problems = problems
	if !keepOpen {
		folder.closer.Close()
		return nil
	}
	return folder
}

// listFolder opens a folder and lists it, with the fast path when the
// tree's root is open through openat2 (treeRoot not nil). There, a folder
// the tree's digest walked clean takes its files from the walk (walked,
// nil when the tree is not watched) and is served through the tree's root
// (see subFolder) without being opened itself.
func listFolder(dir string, bufs *direntBufs, walked *walkListing, treeRoot *fdFolder, reject func(name, reason string), add func(name string, size int64)) (*openedArtifact, error) {
	if treeRoot != nil {
		name := filepath.Base(dir)
		if files, ok := walked.folder(name); ok {
			for _, f := range files {
				add(f.name, f.size)
			}
			return openSubFolder(treeRoot, name), nil
		}
	}
	fast, ok, err := openFdFolder(dir, treeRoot != nil)
	if err != nil {
		return nil, err
	}
	if ok {
		if err := fast.list(bufs, reject, add); err != nil {
			fast.Close()
			return nil, err
		}
		return &openedArtifact{backend: fast, closer: fast}, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	// fs.WalkDir reports entry types as Lstat does and descends into real
	// directories only.
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			reject(name, fmt.Sprintf("unreadable: %v", unwrapPathError(err)))
			return nil // a directory that cannot be read is skipped
		}
		if name == "." {
			return nil
		}
		if reason := entryNameProblem(name); reason != "" {
			reject(name, reason)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			reject(name, "symbolic link rejected")
		case t.IsDir():
		case !t.IsRegular():
			reject(name, notRegular(t))
		default:
			info, err := d.Info()
			if err != nil {
				reject(name, fmt.Sprintf("unreadable: %v", unwrapPathError(err)))
				return nil
			}
			add(name, info.Size())
		}
		return nil
	})
	if err != nil {
		root.Close()
		return nil, err
	}
	return &openedArtifact{backend: dirBackend{root: root}, closer: root}, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openDirFS opens a folder artifact for serving.
func openDirFS(a *Artifact) (fs.FS, io.Closer, error) {
	fast, ok, err := openFdFolder(a.Path, a.root != nil)
	if err != nil {
		return nil, nil, fmt.Errorf("artifact %s: open folder: %w", a.Name, err)
	}
	if ok {
		return newServedFS(a.Files, fast), fast, nil
	}
	root, err := os.OpenRoot(a.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("artifact %s: open folder: %w", a.Name, err)
	}
	return newServedFS(a.Files, dirBackend{root: root}), root, nil
}

// dirBackend serves validated files of a folder through its os.Root. A
// file is served only if it is still a regular file when opened.
type dirBackend struct {
	root *os.Root
}

func (b dirBackend) openFile(name string) (fs.File, error) {
	f, err := b.root.Open(name)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, unwrapPathError(err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, errors.New(notRegular(info.Mode()))
	}
	return f, nil
}

func (b dirBackend) statFile(name string) (fs.FileInfo, error) {
	info, err := b.root.Lstat(name)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New(notRegular(info.Mode()))
	}
	return info, nil
}

func (b dirBackend) statDir(name string) (fs.FileInfo, error) {
	info, err := b.root.Lstat(name)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !info.IsDir() {
		return nil, errNotDir
	}
	return info, nil
}
