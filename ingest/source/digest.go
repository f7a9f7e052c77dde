package source

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxDigestWorkers bounds the goroutines hashing a tree's files.
const maxDigestWorkers = 4

// A tree's digest is a sha256 over everything under its root that an
// ingest could read: every entry's path (slash-separated, relative, in name
// order) and type; a regular file's size and sha256 of its content; a
// symbolic link's target (links are never followed). It depends on content
// and relative paths only, so the same bytes copied elsewhere have the same
// digest (a promotion compares it with the staged ingest's).
//
// A tree without a listing orders retried attempts by file modification
// time, so there the times decide what an ingest reads too: they are
// digested apart (Digesting.Times), for the inputs of an unchanged rerun.

// Digesting is a tree's digest being computed in the background: the tree
// is walked (and every regular file's metadata read) at once; its files
// are hashed once Use says which of them an earlier digest already hashed.
type Digesting struct {
	root      string
	withTimes bool
	use       chan hashing
	useOnce   sync.Once
	waited    chan struct{} // closed by Wait: a deferred digest hashes then
	waitOnce  sync.Once
	stopped   chan struct{} // closed by Stop
	stopOnce  sync.Once
	reads     readSums     // files the ingest read in full (Watch)
	listing   *walkListing // the walk's folders, for the artifacts (Watch)
	done      chan struct{}
	sum       []byte
	times     []byte
	index     []byte
	err       error
}

// hashing is how the files are to be hashed: the earlier index, and
// whether to wait for Wait (and the files read meanwhile) first.
type hashing struct {
	known    FileIndex
	deferred bool
}

// StartDigest starts computing the digest of the tree at dir in the
// background, so that it can run while the tree is opened and read. The
// tree's listing decides whether modification times count; a tree whose
// listing cannot be used is refused before its digest matters.
func StartDigest(ctx context.Context, dir string) *Digesting {
	d := &Digesting{use: make(chan hashing, 1), waited: make(chan struct{}), stopped: make(chan struct{}),
		listing: newWalkListing(), done: make(chan struct{})}
	abs, err := filepath.Abs(dir)
	if err != nil {
		d.err = fmt.Errorf("digest of %s: %w", dir, err)
		d.listing.fail()
		close(d.done)
		return d
	}
	d.root, d.withTimes = abs, !hasListing(abs)
	go d.run(ctx)
	return d
}

// Use gives the index of an earlier digest of this tree (Wait's second
// result, as stored), or nil: a file whose size, times, inode and device
// are those it records is not read again. Hashing starts once Use is
// called; only the first call counts. An index that does not decode is
// ignored.
func (d *Digesting) Use(index []byte) { d.start(index, false) }

// Defer is Use for a digest that nothing needs before the ingest has read
// the tree and that has no earlier index to take files from (a first
// ingest): hashing waits for Wait, and then takes the sum of every file
// the ingest reported read in full (Watch) with the size the walk saw,
// reading only the rest.
func (d *Digesting) Defer(index []byte) { d.start(index, true) }

func (d *Digesting) start(index []byte, deferred bool) {
	d.useOnce.Do(func() { d.use <- hashing{known: decodeFileIndex(index), deferred: deferred} })
}

// Wait returns the digest and the index of the files it hashed (for Use
// the next time), once computed, or ctx's cause. It calls Use(nil) when
// nobody did.
func (d *Digesting) Wait(ctx context.Context) (sum, index []byte, err error) {
	d.Use(nil)
	d.waitOnce.Do(func() { close(d.waited) })
	select {
	case <-d.done:
		return d.sum, d.index, d.err
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	}
}

// Stop abandons a digest nobody will wait for (an ingest that failed): a
// deferred one would otherwise wait for ever. Wait then fails.
func (d *Digesting) Stop() { d.stopOnce.Do(func() { close(d.stopped) }) }

// errStopped is Wait's error after Stop.
var errStopped = errors.New("digest abandoned")

func (d *Digesting) run(ctx context.Context) {
	defer close(d.done)
	walked := time.Now()
	var entries []digestEntry
	if err := walkTree(d.root, "", d.withTimes, &entries); err != nil {
		d.listing.fail()
		d.err = fmt.Errorf("digest of %s: %w", d.root, err)
		return
	}
	d.listing.set(entries)
	var how hashing
	select {
	case how = <-d.use:
	case <-d.stopped:
		d.err = errStopped
		return
	case <-ctx.Done():
		d.err = context.Cause(ctx)
		return
	}
	if how.deferred {
		select {
		case <-d.waited:
		case <-d.stopped:
		case <-ctx.Done():
			d.err = context.Cause(ctx)
			return
		}
		select {
		case <-d.stopped: // stopped before (or as) anyone waited
			d.err = errStopped
			return
		default:
		}
		takeReadSums(entries, d.reads.take())
	}
	if err := hashFiles(ctx, d.root, entries, how.known); err != nil {
		d.err = fmt.Errorf("digest of %s: %w", d.root, err)
		return
	}
	d.sum = combine(entries)
	if d.withTimes {
		d.times = combineTimes(entries)
	}
	// A file changed within racyWindow of the walk could change again
	// without its times moving (they tick coarsely): it is not indexed.
	d.index = encodeFileIndex(entries, walked.Add(-racyWindow).UnixNano())
}

// racyWindow: files whose modification or change time is this close to
// the walk are hashed again next time whatever their metadata says.
const racyWindow = 2 * time.Second

func combine(entries []digestEntry) []byte {
	h := sha256.New()
	var b []byte // one entry's bytes, reused
	for _, e := range entries {
		b = append(b[:0], e.path...)
		b = append(b, 0, e.kind)
		switch e.kind {
		case 'f':
			b = binary.BigEndian.AppendUint64(b, uint64(e.stat.size))
			b = append(b, e.sum[:]...)
		case 'l':
			b = append(b, e.target...)
		}
		b = append(b, '\n')
		h.Write(b)
	}
	return h.Sum(nil)
}

// combineTimes is the sha256 of every entry's path and modification time.
func combineTimes(entries []digestEntry) []byte {
	h := sha256.New()
	var b []byte
	for _, e := range entries {
		b = append(b[:0], e.path...)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint64(b, uint64(e.mod))
		b = append(b, '\n')
		h.Write(b)
	}
	return h.Sum(nil)
}

// Times is the digest of the modification times of a tree without a
// listing, where they order retried attempts (nil for a tree with one), once
// Wait returned.
func (d *Digesting) Times() []byte {
	select {
	case <-d.done:
		return d.times
	default:
		return nil
	}
}

// hasListing says whether the tree at root has a listing, as Open names
// it (Tree.ListingName), usable or not.
func hasListing(root string) bool {
	for _, name := range []string{ListingFile, ManifestFile} {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			return true
		}
	}
	return false
}

// digestEntry is one entry of the tree: kind 'd' folder, 'f' regular file,
// 'l' symbolic link, 'o' anything else (pipes, sockets, devices: never
// opened).
type digestEntry struct {
	path   string
	kind   byte
	summed bool     // sum is known already (takeReadSums)
	stat   fileStat // regular files: as read by the walk (size only where the OS gives no more)
	mod    int64    // nanoseconds, when modification times count
	target string
	sum    [sha256.Size]byte
}

// takeReadSums fills in the sums of the files the ingest read in full, as
// reported (Artifact.FileRead): those whose size is the one the walk saw.
// The file index then pairs the walk's metadata with that sum; a file
// changed after the walk has other times now, and is read again next time.
func takeReadSums(entries []digestEntry, reads map[readKey]readSum) {
	if len(reads) == 0 {
		return
	}
	sinks := map[string]*readSink{}
	for k := range reads {
		sinks[k.sink.name] = k.sink
	}
	for i := range entries {
		e := &entries[i]
		if e.kind != 'f' {
			continue
		}
		if r, ok := lookup(reads, sinks, e.path); ok && r.size == e.stat.size {
			e.sum, e.summed = r.sum, true
		}
	}
}
