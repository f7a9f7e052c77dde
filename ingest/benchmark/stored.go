package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// StoredDocuments re-encodes the JSON documents a benchmark row stores
// (read back from jsonb, which reorders keys and respaces) byte for byte as
// Normalize wrote them, so that `ingest verify` can recompute the row's
// content digest. A document with a key or shape Normalize never writes is
// an error: it was not written by the ingest.
type StoredDocuments struct{}

// Workers re-encodes a stored workers array.
func (StoredDocuments) Workers(stored []byte) ([]byte, error) {
	var w []worker
	return reencode(stored, &w)
}

// PowerInvalidReasons re-encodes a stored power_invalid_reasons array.
func (StoredDocuments) PowerInvalidReasons(stored []byte) ([]byte, error) {
	var r []string
	return reencode(stored, &r)
}

// PowerAudit re-encodes a stored power_audit object.
func (StoredDocuments) PowerAudit(stored []byte) ([]byte, error) {
	var a powerAudit
	return reencode(stored, &a)
}

func reencode(stored []byte, v any) ([]byte, error) {
	if len(stored) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(stored))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("not as the ingest writes it: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not as the ingest writes it: data after the document")
	}
	return json.Marshal(v)
}
