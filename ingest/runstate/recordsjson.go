package runstate

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The ledger's records are encoded by hand, field by field, as
// encoding/json encodes Record: a 5000-point run has 5000 of them (1.8 MB
// of JSON), and reflection spent about 45 ms of CPU per first ingest on
// them. TestAppendRecordsIsMarshal holds the two to the same bytes.

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
	b = appendJSONString(b, r.Name)
	b = append(b, `,"container":`...)
	b = appendJSONString(b, r.Container)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, r.Size, 10)
	if r.Digest != "" {
		b = append(b, `,"digest":`...)
		b = appendJSONString(b, r.Digest)
	}
	if r.ListingID != 0 {
		b = append(b, `,"listingId":`...)
		b = strconv.AppendInt(b, r.ListingID, 10)
	}
	if r.ListingDigest != "" {
		b = append(b, `,"listingDigest":`...)
		b = appendJSONString(b, r.ListingDigest)
	}
	if r.CreatedAt != nil {
		b = append(b, `,"createdAt":`...)
		b = appendJSONTime(b, *r.CreatedAt)
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	if r.FilesDigest != "" {
		b = append(b, `,"filesDigest":`...)
		b = appendJSONString(b, r.FilesDigest)
	}
	b = append(b, `,"filesRead":`...)
	b = strconv.AppendInt(b, int64(r.FilesRead), 10)
	b = append(b, `,"bytesRead":`...)
	b = strconv.AppendInt(b, r.BytesRead, 10)
	return append(b, '}')
}

// appendJSONString appends s quoted; a string encoding/json would escape
// anything in (a control character, a quote or backslash, <, > or &,
// U+2028, U+2029, invalid UTF-8) is encoded by it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONTime appends t as time.Time's MarshalJSON does; a time it
// refuses (a year outside 0-9999) is null, where encoding/json fails the
// whole array (EncodeRecords then stores []).
func appendJSONTime(b []byte, t time.Time) []byte {
	enc, err := t.MarshalJSON()
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}
