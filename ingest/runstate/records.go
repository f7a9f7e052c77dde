package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"io/fs"
	"time"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Record is what the ledger keeps of each artifact a run read: its
// identity, the digest of its container (zips), and a digest of the files
// read from it: sha256 over "path NUL sha256-hex(content) NL", in path order.
type Record struct {
	Name          string     `json:"name"`
	Container     string     `json:"container"`
	Size          int64      `json:"size"`
	Digest        string     `json:"digest,omitempty"`
	ListingID     int64      `json:"listingId,omitempty"`
	ListingDigest string     `json:"listingDigest,omitempty"`
	CreatedAt     *time.Time `json:"createdAt,omitempty"`
	Error         string     `json:"error,omitempty"`
	FilesDigest   string     `json:"filesDigest,omitempty"`
	FilesRead     int        `json:"filesRead"`
	BytesRead     int64      `json:"bytesRead"`
	// files hashes the files read so far, in the (sorted) order read.
	files hash.Hash
	// art is the artifact, told of each file read in full (for the tree's
	// digest: source.Digesting.Watch).
	art *source.Artifact
}

// NewRecord starts the record of an artifact.
func NewRecord(a *source.Artifact) *Record {
	r := &Record{Name: a.Name, Container: string(a.Container), Size: a.Size, Digest: a.Digest, art: a}
	if a.Listing != nil {
		r.ListingID, r.ListingDigest = a.Listing.ID, a.Listing.Digest
		at := a.Listing.CreatedAt
		r.CreatedAt = &at
	}
	if a.Err != nil {
		r.Error = a.Err.Error()
	}
	return r
}

// EncodeRecords is the ledger's JSON of a run's records, each sealed.
func EncodeRecords(recs []*Record) json.RawMessage {
	for _, r := range recs {
		r.Seal()
	}
	return appendRecords(make([]byte, 0, recordSizeHint*len(recs)), recs)
}

// DigestReader hashes and counts what passes through it.
type DigestReader struct {
	r io.Reader
	h hash.Hash
	// N is the number of bytes read so far.
	N int64
}

// NewDigestReader reads r through sha256.
func NewDigestReader(r io.Reader) *DigestReader { return &DigestReader{r: r, h: sha256.New()} }

func (d *DigestReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.N += int64(n)
	return n, err
}

// Digest is the sha256 of what was read.
func (d *DigestReader) Digest() (sum [sha256.Size]byte) {
	d.h.Sum(sum[:0])
	return sum
}

// AddFile records one file read from the artifact: n bytes from its
// start, whose sha256 is sum, the whole file when n is its size. Files are
// read in path order, so the digest does not depend on anything but their
// contents (each file hashed as "path NUL hex(sha256) NL").
func (r *Record) AddFile(path string, sum [sha256.Size]byte, n int64) {
	if r.art != nil {
		r.art.FileRead(path, n, sum)
	}
	if r.files == nil {
		r.files = sha256.New()
	}
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	io.WriteString(r.files, path)
	r.files.Write([]byte{0})
	r.files.Write(hexSum[:])
	r.files.Write([]byte{'\n'})
	r.FilesRead++
	r.BytesRead += n
}

// Seal computes the files digest of a record once its artifact is read,
// and drops the hasher.
func (r *Record) Seal() {
	if r.files != nil {
		r.FilesDigest = "sha256:" + hex.EncodeToString(r.files.Sum(nil))
		r.files = nil
	}
}

// OpenRecorded opens files of an artifact, adding each to its ledger
// record (digest and size) and to the summary's read counters when closed.
func OpenRecorded(fsys fs.FS, rec *Record, d *schema.Details) func(file string) (io.ReadCloser, error) {
	return func(file string) (io.ReadCloser, error) {
		f, err := fsys.Open(file)
		if err != nil {
			return nil, err
		}
		return &recordedFile{f: f, dr: NewDigestReader(f), file: file, rec: rec, d: d}, nil
	}
}

type recordedFile struct {
	f    fs.File
	dr   *DigestReader
	file string
	rec  *Record
	d    *schema.Details
}

func (r *recordedFile) Read(p []byte) (int, error) { return r.dr.Read(p) }

// Close hashes what was not read, records the file and closes it.
func (r *recordedFile) Close() error {
	_, _ = io.Copy(io.Discard, r.dr)
	r.rec.AddFile(r.file, r.dr.Digest(), r.dr.N)
	r.d.FilesRead++
	r.d.BytesRead += r.dr.N
	return r.f.Close()
}
