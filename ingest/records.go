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
// identity, the digests of its container and of every file read.
type artifactRecord struct {
	Name          string       `json:"name"`
	Container     string       `json:"container"`
	Size          int64        `json:"size"`
	Digest        string       `json:"digest,omitempty"`
	ListingID     int64        `json:"listingId,omitempty"`
	ListingDigest string       `json:"listingDigest,omitempty"`
	CreatedAt     *time.Time   `json:"createdAt,omitempty"`
	Error         string       `json:"error,omitempty"`
	Files         []fileRecord `json:"files"`
}

type fileRecord struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

func newArtifactRecord(a *source.Artifact) *artifactRecord {
	r := &artifactRecord{Name: a.Name, Container: string(a.Container), Size: a.Size, Digest: a.Digest, Files: []fileRecord{}}
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
