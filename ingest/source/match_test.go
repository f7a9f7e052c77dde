package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestMatchListing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	const (
		digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	entry := func(id int64, name string, created time.Time, digest string, expired bool) schema.ArtifactListing {
		return schema.ArtifactListing{ID: id, Name: name, CreatedAt: created, Digest: digest, Expired: expired}
	}
	tests := []struct {
		name    string
		digest  string
		listing []schema.ArtifactListing
		wantID  int64 // 0: no match
	}{
		{
			name:    "not listed",
			listing: []schema.ArtifactListing{entry(1, "other", t0, "", false)},
		},
		{
			name:    "newest of two same-name uploads wins",
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0.Add(time.Hour), "", false), entry(2, "bmk_x", t0, "", false)},
			wantID:  1,
		},
		{
			name:    "created_at tie goes to the larger id",
			listing: []schema.ArtifactListing{entry(7, "bmk_x", t0, "", false), entry(9, "bmk_x", t0, "", false), entry(8, "bmk_x", t0, "", false)},
			wantID:  9,
		},
		{
			name:    "zip digest picks its own upload over a newer one",
			digest:  digestA,
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, digestA, false), entry(2, "bmk_x", t0.Add(time.Hour), digestB, false)},
			wantID:  1,
		},
		{
			name:    "digest compare ignores case",
			digest:  digestA,
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false), entry(2, "bmk_x", t0.Add(time.Hour), "", false)},
			wantID:  1,
		},
		{
			name:    "no digest match: newest",
			digest:  digestA,
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, digestB, false), entry(2, "bmk_x", t0.Add(time.Hour), "", false)},
			wantID:  2,
		},
		{
			name:    "expired ignored",
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, "", false), entry(2, "bmk_x", t0.Add(time.Hour), "", true)},
			wantID:  1,
		},
		{
			name:    "all expired: newest expired",
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, "", true), entry(2, "bmk_x", t0.Add(time.Hour), "", true)},
			wantID:  2,
		},
		{
			name:    "folder ignores digests",
			listing: []schema.ArtifactListing{entry(1, "bmk_x", t0, digestA, false), entry(2, "bmk_x", t0.Add(time.Hour), digestB, false)},
			wantID:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := matchListing("bmk_x", tt.digest, tt.listing)
			if tt.wantID == 0 {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tt.wantID, got.ID)
		})
	}
}

func TestIsSHA256Digest(t *testing.T) {
	t.Parallel()
	require.True(t, isSHA256Digest("sha256:abc"))
	require.True(t, isSHA256Digest("SHA256:abc"))
	require.False(t, isSHA256Digest("sha256:"))
	require.False(t, isSHA256Digest("md5:abc"))
	require.False(t, isSHA256Digest(""))
}
