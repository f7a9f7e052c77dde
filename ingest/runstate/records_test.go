package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddFileDigestIsAddFile: a record given each file's sha256 itself
// seals to the digest of one given the hex sums, and a DigestReader's
// Digest is its Sum.
func TestAddFileDigestIsAddFile(t *testing.T) {
	t.Parallel()
	byHex, byDigest := &Record{}, &Record{}
	for _, f := range []struct{ path, body string }{{"a.json", `{"conc": 4}`}, {"sub/b.json", ""}, {"c.jsonl", strings.Repeat("x\n", 5000)}} {
		dr := NewDigestReader(strings.NewReader(f.body))
		_, err := io.Copy(io.Discard, dr)
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(f.body))
		require.Equal(t, sum, dr.Digest())
		require.Equal(t, hex.EncodeToString(sum[:]), dr.Sum())
		byHex.AddFile(f.path, dr.Sum(), dr.N)
		byDigest.AddFileDigest(f.path, dr.Digest(), dr.N)
	}
	byHex.Seal()
	byDigest.Seal()
	require.NotEmpty(t, byHex.FilesDigest)
	require.Equal(t, byHex, byDigest)
}
