package runstate

import "encoding/json"

// RecordsAhead encodes the records a run has so far in the background —
// those of the benchmark stage, thousands on a large run, whose artifacts
// are read — while PostgreSQL applies what the run staged, so that the
// ledger's JSON is not all encoded after the last stage.
type RecordsAhead struct {
	orig   []*Record
	copies []Record
	done   chan struct{}
	b      []byte // the copies' JSON array
}

// EncodeAhead starts encoding recs. It copies and seals them first (the
// files digests, a hash sum each), so that nothing in the background
// touches the records themselves.
func EncodeAhead(recs []*Record) *RecordsAhead {
	a := &RecordsAhead{orig: append([]*Record(nil), recs...), copies: make([]Record, len(recs)), done: make(chan struct{})}
	for i, r := range recs {
		a.copies[i] = *r
		a.copies[i].Seal() // the copy's: the hash it shares is only read
	}
	go func() {
		defer close(a.done)
		ptrs := make([]*Record, len(a.copies))
		for i := range a.copies {
			ptrs[i] = &a.copies[i]
		}
		a.b = appendRecords(make([]byte, 0, recordSizeHint*len(ptrs)), ptrs)
	}()
	return a
}

// Encode returns EncodeRecords(recs), taking the part encoded ahead when
// recs begins with the records it was given, unchanged since.
func (a *RecordsAhead) Encode(recs []*Record) json.RawMessage {
	<-a.done
	if len(recs) < len(a.orig) {
		return EncodeRecords(recs)
	}
	for i, r := range a.orig {
		c := &a.copies[i]
		if recs[i] != r || r.FilesRead != c.FilesRead || r.BytesRead != c.BytesRead || r.Error != c.Error {
			return EncodeRecords(recs)
		}
	}
	for _, r := range a.orig {
		r.Seal() // as EncodeRecords seals what it encodes
	}
	rest := recs[len(a.orig):]
	if len(rest) == 0 {
		return a.b
	}
	tail := EncodeRecords(rest)
	out := make([]byte, 0, len(a.b)+len(tail))
	out = append(out, a.b[:len(a.b)-1]...) // without its ]
	if len(a.orig) > 0 {
		out = append(out, ',')
	}
	return append(out, tail[1:]...) // without its [
}
