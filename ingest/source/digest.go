package source

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// maxDigestWorkers bounds the goroutines hashing a tree's files.
const maxDigestWorkers = 4

// Digest is a sha256 over everything under the tree's root that an ingest
// could read: every entry's path (slash-separated, relative, in name
// order) and type; a regular file's size and sha256 of its content; a
// symbolic link's target (links are never followed). A tree without a
// listing orders retried attempts by file modification time, so there every
// file's modification time is included too. Two trees with equal digests
// give an ingest the same input.
func (t *Tree) Digest(ctx context.Context) ([]byte, error) {
	return digestDir(ctx, t.Root, t.ListingName == "")
}

// Digesting is a tree's digest being computed in the background.
type Digesting struct {
	done chan struct{}
	sum  []byte
	err  error
}

// StartDigest starts computing the Digest of the tree at dir in the
// background, so that it can run while the tree is opened and read. The
// tree's listing decides whether modification times count; a tree whose
// listing cannot be used is refused before its digest matters.
func StartDigest(ctx context.Context, dir string) *Digesting {
	d := &Digesting{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		abs, err := filepath.Abs(dir)
		if err != nil {
			d.err = err
			return
		}
		d.sum, d.err = digestDir(ctx, abs, !hasListing(abs))
	}()
	return d
}

// Wait returns the digest once computed, or ctx's cause.
func (d *Digesting) Wait(ctx context.Context) ([]byte, error) {
	select {
	case <-d.done:
		return d.sum, d.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
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

func digestDir(ctx context.Context, root string, withTimes bool) ([]byte, error) {
	var entries []digestEntry
	if err := walkTree(root, "", withTimes, &entries); err != nil {
		return nil, fmt.Errorf("digest of %s: %w", root, err)
	}
	if err := hashFiles(ctx, root, entries); err != nil {
		return nil, fmt.Errorf("digest of %s: %w", root, err)
	}
	h := sha256.New()
	var num [8]byte
	for _, e := range entries {
		io.WriteString(h, e.path)
		h.Write([]byte{0, e.kind})
		switch e.kind {
		case 'f':
			binary.BigEndian.PutUint64(num[:], uint64(e.size))
			h.Write(num[:])
			h.Write(e.sum[:])
		case 'l':
			io.WriteString(h, e.target)
		}
		if e.mod != 0 {
			binary.BigEndian.PutUint64(num[:], uint64(e.mod))
			h.Write(num[:])
		}
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil), nil
}

// digestEntry is one entry of the tree: kind 'd' folder, 'f' regular file,
// 'l' symbolic link, 'o' anything else (pipes, sockets, devices: never
// opened).
type digestEntry struct {
	path   string
	kind   byte
	size   int64
	mod    int64 // nanoseconds, when modification times count
	target string
	sum    [sha256.Size]byte
}

// walkTree lists dir (rel below the root) depth first, in name order.
func walkTree(dir, rel string, withTimes bool, out *[]digestEntry) error {
	list, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range list {
		p := d.Name()
		if rel != "" {
			p = rel + "/" + p
		}
		full := filepath.Join(dir, d.Name())
		e := digestEntry{path: p}
		typ := d.Type()
		switch {
		case typ.IsDir():
			e.kind = 'd'
		case typ.IsRegular():
			e.kind = 'f'
		case typ&fs.ModeSymlink != 0:
			e.kind = 'l'
			if e.target, err = os.Readlink(full); err != nil {
				return err
			}
		default:
			e.kind = 'o'
		}
		if withTimes && e.kind == 'f' {
			info, err := d.Info()
			if err != nil {
				return err
			}
			e.mod = info.ModTime().UnixNano()
		}
		*out = append(*out, e)
		if e.kind == 'd' {
			if err := walkTree(full, p, withTimes, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashFiles fills in the size and sha256 of every regular file, a few
// files at a time.
func hashFiles(ctx context.Context, root string, entries []digestEntry) error {
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), maxDigestWorkers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := range next {
				if errs[w] == nil {
					errs[w] = hashFile(filepath.Join(root, filepath.FromSlash(entries[i].path)), &entries[i], buf)
				}
			}
		})
	}
	var err error
	for i := range entries {
		if entries[i].kind != 'f' {
			continue
		}
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func hashFile(name string, e *digestEntry, buf []byte) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		e.size += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	h.Sum(e.sum[:0])
	return nil
}
