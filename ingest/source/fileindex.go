package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	"github.com/klauspost/compress/s2"
)

// fileStat is what the walk reads of a regular file besides its name. A
// file whose size, modification and change times, inode and device are
// all unchanged is taken to hold the same bytes, as git's index does; full
// is false where the OS gives only the size (never trusted).
type fileStat struct {
	size, mtime, ctime int64
	ino, dev           uint64
	full               bool
}

// FileIndex maps a file's path in the tree to its metadata and sha256 as
// an earlier digest read them.
type FileIndex map[string]indexedFile

type indexedFile struct {
	stat fileStat
	sum  [sha256.Size]byte
}

// fileIndexMagic begins an encoded index (and names its layout);
// fileIndexS2Magic one whose entries, in that layout, are compressed as
// one S2 block. Indexes are written compressed, since paths repeat their
// artifact's name and the index is most of a large run's ledger row. Both
// are read.
const (
	fileIndexMagic   = "ingest-file-index-1\n"
	fileIndexS2Magic = "ingest-file-index-1-s2\n"
)

// encodeFileIndex is the index of the regular files of entries: per
// file, its path, size, times, inode and device as varints, then its
// sha256; compressed (fileIndexS2Magic). A file whose metadata is not
// full or whose times are not before cutoff (nanoseconds) is indexed with
// zero times, inode and device, which no walk matches: its sum is
// recorded (a promotion names the files that differ, FileSums) but never
// taken instead of reading it.
func encodeFileIndex(entries []digestEntry, cutoff int64) []byte {
	raw := encodeFileEntries(entries, cutoff)
	out := make([]byte, len(fileIndexS2Magic)+s2.MaxEncodedLen(len(raw)))
	copy(out, fileIndexS2Magic)
	// Encoded in place (dst is large enough); append copies only if it
	// was not.
	enc := s2.Encode(out[len(fileIndexS2Magic):], raw)
	return append(out[:len(fileIndexS2Magic)], enc...)
}

// encodeFileEntries is the uncompressed index (fileIndexMagic), which the
// compressed one holds.
func encodeFileEntries(entries []digestEntry, cutoff int64) []byte {
	trusted := func(e *digestEntry) bool {
		s := &e.stat
		return s.full && s.mtime < cutoff && s.ctime < cutoff
	}
	size := len(fileIndexMagic)
	for i := range entries {
		if e := &entries[i]; e.kind == 'f' {
			size += binary.MaxVarintLen64*6 + len(e.path) + sha256.Size
		}
	}
	b := make([]byte, 0, size) // one allocation: the index of a large tree is megabytes
	b = append(b, fileIndexMagic...)
	for i := range entries {
		e := &entries[i]
		if e.kind != 'f' {
			continue
		}
		s := e.stat
		if !trusted(e) {
			s = fileStat{size: s.size}
		}
		b = binary.AppendUvarint(b, uint64(len(e.path)))
		b = append(b, e.path...)
		b = binary.AppendVarint(b, s.size)
		b = binary.AppendVarint(b, s.mtime)
		b = binary.AppendVarint(b, s.ctime)
		b = binary.AppendUvarint(b, s.ino)
		b = binary.AppendUvarint(b, s.dev)
		b = append(b, e.sum[:]...)
	}
	return b
}

// decodeFileIndex reads an encoded index; anything it cannot read gives
// nil (every file is then hashed).
func decodeFileIndex(b []byte) FileIndex {
	if bytes.HasPrefix(b, []byte(fileIndexS2Magic)) {
		raw, err := s2.Decode(nil, b[len(fileIndexS2Magic):])
		if err != nil {
			return nil
		}
		b = raw
	}
	if !bytes.HasPrefix(b, []byte(fileIndexMagic)) {
		return nil
	}
	b = b[len(fileIndexMagic):]
	idx := FileIndex{}
	ok := true
	skip := func(n int) { // past a varint of n bytes (n <= 0: none could be read)
		if n <= 0 {
			ok, n = false, 0
		}
		b = b[n:]
	}
	uvarint := func() uint64 { v, n := binary.Uvarint(b); skip(n); return v }
	varint := func() int64 { v, n := binary.Varint(b); skip(n); return v }
	for len(b) > 0 {
		var f indexedFile
		n := uvarint()
		if !ok || n > uint64(len(b)) {
			return nil
		}
		path := string(b[:n])
		b = b[n:]
		f.stat.size, f.stat.mtime, f.stat.ctime = varint(), varint(), varint()
		f.stat.ino, f.stat.dev = uvarint(), uvarint()
		f.stat.full = true
		if !ok || len(b) < sha256.Size {
			return nil
		}
		copy(f.sum[:], b)
		b = b[sha256.Size:]
		idx[path] = f
	}
	return idx
}

// FileSums is every file's sha256 by its path in the tree, as an encoded
// index (Digesting.Wait's) records them; nil when it cannot be read.
func FileSums(index []byte) map[string][sha256.Size]byte {
	idx := decodeFileIndex(index)
	if idx == nil {
		return nil
	}
	out := make(map[string][sha256.Size]byte, len(idx))
	for p, f := range idx {
		out[p] = f.sum
	}
	return out
}
