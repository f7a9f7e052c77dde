package source

import (
	"crypto/sha256"
	"path/filepath"
	"strings"
	"sync"
)

// readSums are the sha256 sums of files an ingest read in full, for a
// digest whose hashing waits for the ingest (Digesting.Defer): such a file
// is not read a second time. They are keyed by artifact and file, which
// costs no new string per file.
type readSums struct {
	mu sync.Mutex
	m  map[readKey]readSum
}

// readKey names a file read: its artifact's sink and its path in the
// artifact ("" for a zip, read whole).
type readKey struct {
	sink *readSink
	file string
}

type readSum struct {
	size int64
	sum  [sha256.Size]byte
}

func (r *readSums) add(k readKey, size int64, sum [sha256.Size]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[readKey]readSum{}
	}
	r.m[k] = readSum{size: size, sum: sum}
}

// take returns the sums and forgets them.
func (r *readSums) take() map[readKey]readSum {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	r.m = nil
	return m
}

// lookup finds the sum reported for the tree entry at path (relative to
// the root): a zip's own, or a file's of a folder artifact, whose sinks
// are found by their entry's name. It builds no string.
func lookup(reads map[readKey]readSum, sinks map[string]*readSink, path string) (readSum, bool) {
	name, file, _ := strings.Cut(path, "/")
	s := sinks[name]
	if s == nil {
		return readSum{}, false
	}
	r, ok := reads[readKey{sink: s, file: file}]
	return r, ok
}

// readSink is where an artifact reports the files read from it: the tree
// digest's sums, and the artifact's entry in the digest's root.
type readSink struct {
	sums    *readSums
	name    string
	listing *walkListing // the digest walk's folders (walkListing)
}

// Watch makes the digest learn the sha256 of each file that t's artifacts
// report read in full (Artifact.FileRead), and of each zip as it is
// loaded, so that a deferred digest (Defer) does not read them again. A
// folder artifact loaded afterwards takes its files from the digest's walk
// rather than listing the folder again (walkListing).
// Call it before the artifacts are read; a file reported before is simply
// hashed by the digest. A tree with another root is not watched.
func (d *Digesting) Watch(t *Tree) {
	if d.root == "" || t == nil || t.Root != d.root {
		return
	}
	for _, a := range t.Artifacts {
		dir, name := filepath.Split(a.Path)
		if filepath.Clean(dir) != d.root || name == "" || strings.ContainsRune(name, '/') {
			continue
		}
		a.sink.Store(&readSink{sums: &d.reads, name: name, listing: d.listing})
	}
}

// FileRead reports that file (a path of Files) was read in full: n bytes
// whose sha256 is sum. The tree's digest then takes that sum instead of
// reading the file again (Digesting.Watch), provided n is the size its
// walk saw. Files of a zip are not the tree's files: the digest hashes the
// zip itself, which loading the artifact reports.
func (a *Artifact) FileRead(file string, n int64, sum [sha256.Size]byte) {
	s := a.sink.Load()
	if s == nil || a.Container != ContainerDir || file == "" {
		return
	}
	s.sums.add(readKey{sink: s, file: file}, n, sum)
}

// zipRead reports the sha256 of a zip artifact read in full by its load.
func (a *Artifact) zipRead(size int64, sum []byte) {
	s := a.sink.Load()
	if s == nil || len(sum) != sha256.Size {
		return
	}
	s.sums.add(readKey{sink: s}, size, [sha256.Size]byte(sum))
}
