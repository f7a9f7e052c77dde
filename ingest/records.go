package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"time"

	"github.com/inferencex/ingest/ingest/source"
)

// artifactRecord is what the ledger keeps of each artifact a run read: its
// identity, the digest of its container (zips), and a digest of the files
// read from it: sha256 over "path NUL sha256-hex(content) NL", in path order.
type artifactRecord struct {
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
}

func newArtifactRecord(a *source.Artifact) *artifactRecord {
	r := &artifactRecord{Name: a.Name, Container: string(a.Container), Size: a.Size, Digest: a.Digest}
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

func encodeRecords(recs []*artifactRecord) json.RawMessage {
	if len(recs) == 0 {
		return json.RawMessage("[]")
	}
	for _, r := range recs {
		r.seal()
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return json.RawMessage("[]")
	}
	return b
}

// digestReader hashes and counts what passes through it.
type digestReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newDigestReader(r io.Reader) *digestReader { return &digestReader{r: r, h: sha256.New()} }

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	return n, err
}

func (d *digestReader) sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// addFile records one file read from the artifact. Files are read in path
// order, so the digest does not depend on anything but their contents.
func (r *artifactRecord) addFile(path, sha string, n int64) {
	if r.files == nil {
		r.files = sha256.New()
	}
	io.WriteString(r.files, path)
	r.files.Write([]byte{0})
	io.WriteString(r.files, sha)
	r.files.Write([]byte{'\n'})
	r.FilesRead++
	r.BytesRead += n
}

// seal computes the files digest of a record once its artifact is read,
// and drops the hasher.
func (r *artifactRecord) seal() {
	if r.files != nil {
		r.FilesDigest = "sha256:" + hex.EncodeToString(r.files.Sum(nil))
		r.files = nil
	}
}
