package source

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sync"
)

// readSums are the sha256 sums of files an ingest read in full, by path
// relative to the tree's root, for a digest whose hashing waits for the
// ingest (Digesting.Defer): such a file is not read a second time.
type readSums struct {
	mu sync.Mutex
	m  map[string]readSum
}

type readSum struct {
	size int64
	sum  [sha256.Size]byte
}

func (r *readSums) add(path string, size int64, sum [sha256.Size]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]readSum{}
	}
	r.m[path] = readSum{size: size, sum: sum}
}

// take returns the sums and forgets them.
func (r *readSums) take() map[string]readSum {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	r.m = nil
	return m
}

// readSink is where an artifact reports the files read from it: the tree
// digest's sums, and the artifact's path below the digest's root.
type readSink struct {
	sums *readSums
	rel  string
}

// Watch makes the digest learn the sha256 of each file that t's artifacts
// report read in full (Artifact.FileRead), and of each zip as it is
// loaded, so that a deferred digest (Defer) does not read them again.
// Call it before the artifacts are read; a file reported before is simply
// hashed by the digest. A tree with another root is not watched.
func (d *Digesting) Watch(t *Tree) {
	if d.root == "" || t == nil || t.Root != d.root {
		return
	}
	for _, a := range t.Artifacts {
		rel, err := filepath.Rel(d.root, a.Path)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		a.sink.Store(&readSink{sums: &d.reads, rel: filepath.ToSlash(rel)})
	}
}

// FileRead reports that file (a path of Files) was read in full: n bytes
// whose sha256 is sumHex. The tree's digest then takes that sum instead of
// reading the file again (Digesting.Watch), provided n is the size its
// walk saw. Files of a zip are not the tree's files: the digest hashes the
// zip itself, which loading the artifact reports.
func (a *Artifact) FileRead(file string, n int64, sumHex string) {
	s := a.sink.Load()
	if s == nil || a.Container != ContainerDir {
		return
	}
	var sum [sha256.Size]byte
	if b, err := hex.DecodeString(sumHex); err != nil || len(b) != len(sum) {
		return
	} else {
		copy(sum[:], b)
	}
	s.sums.add(s.rel+"/"+file, n, sum)
}

// zipRead reports the sha256 of a zip artifact read in full by its load.
func (a *Artifact) zipRead(size int64, sum []byte) {
	s := a.sink.Load()
	if s == nil || len(sum) != sha256.Size {
		return
	}
	s.sums.add(s.rel, size, [sha256.Size]byte(sum))
}
