package runstate

import (
	"strconv"
	"time"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// The ledger's records are encoded by hand, field by field, as
// encoding/json encodes Record: a run has one per file it read, and
// reflection over them is a visible share of a first ingest's CPU
// (docs/performance.md, "Current figures"). TestAppendRecordsIsMarshal
// holds the two to the same bytes.

// appendRecords appends the JSON array of recs.
func appendRecords(b []byte, recs []*Record) []byte {
	b = append(b, '[')
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.appendJSON(b)
	}
	return append(b, ']')
}

// recordSizeHint is about the JSON size of one record.
const recordSizeHint = 384

func (r *Record) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = strictjson.AppendQuoted(b, r.Name)
	b = append(b, `,"container":`...)
	b = strictjson.AppendQuoted(b, r.Container)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, r.Size, 10)
	if r.Digest != "" {
		b = append(b, `,"digest":`...)
		b = strictjson.AppendQuoted(b, r.Digest)
	}
	if r.ListingID != 0 {
		b = append(b, `,"listingId":`...)
		b = strconv.AppendInt(b, r.ListingID, 10)
	}
	if r.ListingDigest != "" {
		b = append(b, `,"listingDigest":`...)
		b = strictjson.AppendQuoted(b, r.ListingDigest)
	}
	if r.CreatedAt != nil {
		b = append(b, `,"createdAt":`...)
		b = appendJSONTime(b, *r.CreatedAt)
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = strictjson.AppendQuoted(b, r.Error)
	}
	if r.FilesDigest != "" {
		b = append(b, `,"filesDigest":`...)
		b = strictjson.AppendQuoted(b, r.FilesDigest)
	}
	b = append(b, `,"filesRead":`...)
	b = strconv.AppendInt(b, int64(r.FilesRead), 10)
	b = append(b, `,"bytesRead":`...)
	b = strconv.AppendInt(b, r.BytesRead, 10)
	return append(b, '}')
}

// appendJSONTime appends t as time.Time's MarshalJSON does; a time it
// refuses (a year outside 0-9999) is null, where encoding/json would fail
// the whole array.
func appendJSONTime(b []byte, t time.Time) []byte {
	enc, err := t.MarshalJSON()
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}
