package runstate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAppendRecordsIsMarshal: the hand-written encoding of the ledger's
// records is byte for byte what encoding/json makes of them: field order,
// omitted empty fields, times, and strings that need escaping (quotes,
// control characters, HTML characters, U+2028, non-ASCII, invalid UTF-8).
func TestAppendRecordsIsMarshal(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 8, 20, 13, 4, 5, 123456789, time.UTC)
	zone := time.Date(2026, 8, 20, 13, 4, 5, 0, time.FixedZone("x", 2*3600))
	recs := []*Record{
		{},
		{Name: "bmk_a", Container: "dir", Size: 12, FilesRead: 1, BytesRead: 12},
		{Name: "bmk_b.zip", Container: "zip", Size: -1, Digest: "sha256:ab", ListingID: 7, ListingDigest: "sha256:cd",
			CreatedAt: &at, FilesDigest: "sha256:ef", FilesRead: 3, BytesRead: 1 << 40},
		{Name: `quote " back \ tab` + "\t nl \n", Container: "dir", CreatedAt: &zone, Error: "open a<b>&c: no such file"},
		{Name: "gpu_métrics_✓", Container: "dir", Error: "line\u2028sep\u2029", Digest: "bad\xffutf8"},
		{Name: "ctl\x00\x1f", Container: "dir", ListingID: -3},
	}
	want, err := json.Marshal(recs)
	require.NoError(t, err)
	require.Equal(t, string(want), string(appendRecords(nil, recs)))
	require.Equal(t, "[]", string(appendRecords(nil, nil)))
	require.Equal(t, string(want), string(EncodeRecords(recs)))
}
