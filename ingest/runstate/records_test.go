package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordFilesDigest: a DigestReader's Digest is the sha256 of what it
// read, and a record seals to the sha256 of "path NUL hex(sha256) NL" per
// file, in the order added (the form earlier ledgers hold).
func TestRecordFilesDigest(t *testing.T) {
	t.Parallel()
	rec := &Record{}
	want := sha256.New()
	for _, f := range []struct{ path, body string }{{"a.json", `{"conc": 4}`}, {"sub/b.json", ""}, {"c.jsonl", strings.Repeat("x\n", 5000)}} {
		dr := NewDigestReader(strings.NewReader(f.body))
		_, err := io.Copy(io.Discard, dr)
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(f.body))
		require.Equal(t, sum, dr.Digest())
		rec.AddFile(f.path, dr.Digest(), dr.N)
		io.WriteString(want, f.path+"\x00"+hex.EncodeToString(sum[:])+"\n")
	}
	rec.Seal()
	require.Equal(t, "sha256:"+hex.EncodeToString(want.Sum(nil)), rec.FilesDigest)
	require.EqualValues(t, 3, rec.FilesRead)
	require.EqualValues(t, 11+10000, rec.BytesRead)
}
