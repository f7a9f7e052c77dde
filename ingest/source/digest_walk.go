package source

import (
	"context"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// The tree's walk and its files' hashing through package os, as every OS
// has them; Linux walks and hashes with raw system calls instead
// (digest_walk_linux.go), with the same results, and tests compare the two.

// entryKind is the digest's kind of an entry of type mode: 'd' folder,
// 'f' regular file, 'l' symbolic link, 'o' anything else.
func entryKind(mode fs.FileMode) byte {
	switch {
	case mode.IsDir():
		return 'd'
	case mode.IsRegular():
		return 'f'
	case mode&fs.ModeSymlink != 0:
		return 'l'
	}
	return 'o'
}

// walkTreePortable lists dir (rel below the root) depth first, in name
// order.
func walkTreePortable(dir, rel string, withTimes bool, out *[]digestEntry) error {
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
		e := digestEntry{path: p, kind: entryKind(d.Type())}
		if e.kind == 'l' {
			if e.target, err = os.Readlink(full); err != nil {
				return err
			}
		}
		if e.kind == 'f' {
			info, err := d.Info()
			if err != nil {
				return err
			}
			e.stat = statOf(info)
			if withTimes {
				e.mod = info.ModTime().UnixNano()
			}
		}
		*out = append(*out, e)
		if e.kind == 'd' {
			if err := walkTreePortable(full, p, withTimes, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashFilesPortable fills in the sha256 of every regular file as
// hashFiles does, opening each through package os.
func hashFilesPortable(ctx context.Context, root string, entries []digestEntry, known FileIndex) error {
	return hashEach(ctx, entries, unknownFiles(entries, known), 64<<10, func(e *digestEntry, buf []byte) error {
		return hashFile(filepath.Join(root, filepath.FromSlash(e.path)), e, buf)
	})
}

// unknownFiles takes the sha256 of every regular file that known records
// with the metadata the walk read, and returns the indexes in entries of
// the files left to read (not those summed already: takeReadSums).
func unknownFiles(entries []digestEntry, known FileIndex) []int {
	var todo []int
	for i := range entries {
		e := &entries[i]
		if e.kind != 'f' || e.summed {
			continue
		}
		if k, ok := known[e.path]; ok && e.stat.full && k.stat == e.stat {
			e.sum = k.sum
			continue
		}
		todo = append(todo, i)
	}
	return todo
}

// hashEach fills in the sha256 of the files todo (indexes in entries), a
// few at a time, with hash, which each worker calls with its own buffer of
// bufSize bytes.
func hashEach(ctx context.Context, entries []digestEntry, todo []int, bufSize int, hash func(e *digestEntry, buf []byte) error) error {
	var next atomic.Int64
	workers := max(1, min(runtime.GOMAXPROCS(0), maxDigestWorkers, len(todo)))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]byte, bufSize)
			for {
				n := int(next.Add(1)) - 1
				if n >= len(todo) || ctx.Err() != nil {
					return
				}
				if err := hash(&entries[todo[n]], buf); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// hashFile reads one file through sha256. The digest takes the size read,
// which for a file that grew or shrank since the walk is the truth.
func hashFile(name string, e *digestEntry, buf []byte) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	var size int64
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		size += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if size != e.stat.size {
		e.stat = fileStat{size: size} // changed while read: never indexed
	}
	h.Sum(e.sum[:0])
	return nil
}
