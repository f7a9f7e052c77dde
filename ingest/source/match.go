package source

import (
	"strings"

	"github.com/inferencex/ingest/schema"
)

// matchListing picks the listing entry of a present artifact. The listing
// can hold several entries with one name (a retried job re-uploaded it):
// when digest (the zip's own "sha256:<hex>"; empty for a folder) equals an
// entry's digest, that entry wins; otherwise the newest unexpired entry by
// created_at, ties to the larger id. When every entry of the name has
// expired, the newest expired one still names the upload. It returns a
// copy, or nil when the name is not listed.
func matchListing(name, digest string, listing []schema.ArtifactListing) *schema.ArtifactListing {
	var byDigest, unexpired, newest *schema.ArtifactListing
	for i := range listing {
		e := &listing[i]
		if e.Name != name {
			continue
		}
		if digest != "" && strings.EqualFold(e.Digest, digest) && newer(e, byDigest) {
			byDigest = e
		}
		if !e.Expired && newer(e, unexpired) {
			unexpired = e
		}
		if newer(e, newest) {
			newest = e
		}
	}
	for _, pick := range []*schema.ArtifactListing{byDigest, unexpired, newest} {
		if pick != nil {
			c := *pick
			return &c
		}
	}
	return nil
}

// newer reports whether e was uploaded after best (nil best: always).
func newer(e, best *schema.ArtifactListing) bool {
	if best == nil {
		return true
	}
	if !e.CreatedAt.Equal(best.CreatedAt) {
		return e.CreatedAt.After(best.CreatedAt)
	}
	return e.ID > best.ID
}

// isSHA256Digest reports whether d claims to be a "sha256:<hex>" digest,
// which a zip must then match.
func isSHA256Digest(d string) bool {
	return len(d) > len("sha256:") && strings.EqualFold(d[:len("sha256:")], "sha256:")
}
