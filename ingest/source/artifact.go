package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/inferencex/ingest/schema"
)

// Container says how an artifact is stored in the tree.
type Container string

const (
	// ContainerDir is an extracted artifact: a folder <name>/.
	ContainerDir Container = "dir"
	// ContainerZip is an artifact zip <name>.zip, read in place.
	ContainerZip Container = "zip"
)

// Problem is one rejected entry or unreadable thing. Artifact and File are
// empty when they do not apply; File is slash-separated and relative to the
// artifact root (or to the tree root for tree-level problems). Names that
// are not printable are Go-quoted.
type Problem struct {
	Artifact string
	File     string
	Reason   string
}

// Artifact is one artifact of the tree. Name, Container, Path and Listing
// are set by Open; Files, Size, Digest, Problems and Err (and a Listing
// refined by the zip's digest) are filled by Load, once, and never change
// afterwards. FS and Release manage the open handle.
type Artifact struct {
	Name      string
	Container Container
	// Path is the absolute path of the folder or the .zip.
	Path string
	// Files lists every safe regular file: slash-separated paths relative
	// to the artifact root, sorted.
	Files []string
	// Listing is the matched entry of the GitHub listing, nil when the
	// artifact is not listed (or the tree has no listing).
	Listing *schema.ArtifactListing
	// Size is the zip's file size, or for a folder the sum of its files'
	// sizes.
	Size int64
	// Digest is "sha256:<hex>" of the zip bytes; empty for a folder.
	Digest string
	// Problems are the entries rejected inside this artifact (hostile
	// paths, links, non-regular files), sorted.
	Problems []Problem
	// Err is set when the artifact cannot be read at all; Files is empty
	// then.
	Err error

	loadOnce   sync.Once
	candidates []schema.ArtifactListing // listing entries with this name
	root       *fdFolder                // the tree's root; nil where folders are not served through openat2 (see fdFolder, subFolder)
	dirents    *direntBufs              // the tree's directory-listing buffers (nil: allocate)
	sink       atomic.Pointer[readSink] // where files read in full are reported (Digesting.Watch)

	mu     sync.Mutex
	fsys   fs.FS
	closer io.Closer
}

// openedArtifact is an artifact left open by its load: what serves its
// files, and what closes it. FS takes it over instead of reopening.
type openedArtifact struct {
	backend backend
	closer  io.Closer
}

// Load indexes the artifact: its files and rejected entries and, for a
// zip, its digest, checked against the listing. It runs once, on first
// use, is safe for concurrent use, and returns Err.
func (a *Artifact) Load() error {
	a.loadOnce.Do(func() { a.load(false) })
	return a.Err
}

// load indexes the artifact. With keepOpen, the open artifact is returned
// for FS to serve from, which saves reopening it (and, for a zip, reading
// its central directory again).
func (a *Artifact) load(keepOpen bool) *openedArtifact {
	switch a.Container {
	case ContainerZip:
		return loadZip(a, a.candidates, keepOpen)
	case ContainerDir:
		return loadDir(a, a.candidates, keepOpen)
	default:
		a.Err = fmt.Errorf("artifact %s: unknown container %q", a.Name, a.Container)
	}
	return nil
}

// FS returns the artifact's files as a read-only fs.FS that also
// implements fs.ReadDirFS and fs.StatFS. It serves exactly the paths in
// Files and the directories leading to them. The zip or folder is opened
// on first use and stays open until Release; an FS obtained before Release
// fails afterwards, and the next call to FS opens it again.
func (a *Artifact) FS() (fs.FS, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fsys != nil {
		return a.fsys, nil
	}
	var opened *openedArtifact
	a.loadOnce.Do(func() { opened = a.load(true) })
	if a.Err != nil {
		return nil, a.Err
	}
	if opened != nil { // first use: serve from what the load opened
		a.fsys, a.closer = newServedFS(a.Files, opened.backend), opened.closer
		return a.fsys, nil
	}
	var (
		fsys   fs.FS
		closer io.Closer
		err    error
	)
	switch a.Container {
	case ContainerZip:
		fsys, closer, err = openZipFS(a)
	case ContainerDir:
		fsys, closer, err = openDirFS(a)
	default:
		err = fmt.Errorf("artifact %s: unknown container %q", a.Name, a.Container)
	}
	if err != nil {
		return nil, err
	}
	a.fsys, a.closer = fsys, closer
	return fsys, nil
}

// Release closes the artifact's open zip or folder, if any. A run may hold
// thousands of zips: release each one when done with it.
func (a *Artifact) Release() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closer == nil {
		return nil
	}
	err := a.closer.Close()
	a.fsys, a.closer = nil, nil
	if err != nil && !errors.Is(err, fs.ErrClosed) {
		return fmt.Errorf("artifact %s: release: %w", a.Name, err)
	}
	return nil
}

// notRegular is the Problem reason for an entry that is neither a regular
// file, a directory nor a symbolic link.
func notRegular(m fs.FileMode) string {
	kind := "mode " + m.Type().String()
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeCharDevice != 0:
		kind = "character device"
	case m&fs.ModeDevice != 0:
		kind = "device"
	case m&fs.ModeIrregular != 0:
		kind = "irregular file"
	}
	return "not a regular file: " + kind
}
