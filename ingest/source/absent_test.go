package source

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestTreeAbsent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_present", "agg.json"), "{}")
	writeFile(t, filepath.Join(dir, "bmk_retried", "agg.json"), "{}")
	writeFile(t, filepath.Join(dir, "bmk_unlisted", "agg.json"), "{}")
	listing := []schema.ArtifactListing{
		{ID: 1, Name: "bmk_present", CreatedAt: t0},
		{ID: 2, Name: "bmk_retried", CreatedAt: t0, Expired: true}, // an expired older upload of a present name
		{ID: 3, Name: "bmk_retried", CreatedAt: t0.Add(time.Hour)},
		{ID: 4, Name: "bmk_gone_b", CreatedAt: t0, Expired: true},
		{ID: 5, Name: "bmk_gone_a", CreatedAt: t0, Expired: true},
		{ID: 6, Name: "bmk_gone_a", CreatedAt: t0.Add(time.Hour), Expired: true},
		{ID: 7, Name: "bmk_lost", CreatedAt: t0, Expired: true},
		{ID: 8, Name: "bmk_lost", CreatedAt: t0.Add(time.Hour)}, // still downloadable
		{ID: 9, Name: "eval_lost", CreatedAt: t0},
	}
	require.NoError(t, WriteListing(filepath.Join(dir, ListingFile), schema.RunMeta{}, listing))
	tree := openTree(t, dir)
	expired, missing := tree.Absent()
	require.Equal(t, []string{"bmk_gone_a", "bmk_gone_b"}, expired)
	require.Equal(t, []string{"bmk_lost", "eval_lost"}, missing)

	require.NoError(t, os.Remove(filepath.Join(dir, ListingFile)))
	expired, missing = openTree(t, dir).Absent()
	require.Empty(t, expired, "no listing, nothing is known to be absent")
	require.Empty(t, missing)
}
