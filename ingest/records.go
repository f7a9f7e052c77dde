package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"sort"
	"time"

	"github.com/inferencex/ingest/ingest/source"
)

// artifactRecord is what the ledger keeps of each artifact a run read: its
// identity, the digest of its container (zips), and a digest of the files
// read from it: sha256 over "path NUL sha256(content) NL" in path order.
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
	// Files are the digests FilesDigest is computed from.
	Files []fileRecord `json:"-"`
}

type fileRecord struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
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

// seal computes the files digest and totals of a record.
func (r *artifactRecord) seal() {
	if len(r.Files) == 0 {
		return
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	h := sha256.New()
	r.FilesRead, r.BytesRead = len(r.Files), 0
	for _, f := range r.Files {
		io.WriteString(h, f.Path)
		h.Write([]byte{0})
		io.WriteString(h, f.SHA256)
		h.Write([]byte{'\n'})
		r.BytesRead += f.Bytes
	}
	r.FilesDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
}
