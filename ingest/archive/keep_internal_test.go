package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestObjectsBounded: listing run after run (a backfill of the whole
// archive) keeps the objects of the last keptRuns runs only, so memory
// does not grow with the archive; a run listed again is downloadable
// again.
func TestObjectsBounded(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	const runs = keptRuns + 5
	for i := range runs {
		dir := filepath.Join(root, "2026-01-01", fmt.Sprintf("Sweep_%d", 28800000000+i), "artifacts")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for j := range 3 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("bmk_%d_%d.zip", j, 9000000000+i*10+j)), []byte("zip"), 0o644))
		}
	}
	a, err := Open(ctx, root, Options{})
	require.NoError(t, err)
	defer a.Close()
	for i := range runs {
		c, err := a.Contents(ctx, int64(28800000000+i))
		require.NoError(t, err)
		require.Len(t, c.Uploads, 3)
	}
	require.Len(t, a.objects, 3*keptRuns)
	first, err := a.Contents(ctx, 28800000000)
	require.NoError(t, err)
	_, _, err = a.Download(ctx, first.Uploads[0], filepath.Join(t.TempDir(), "x.zip"))
	require.NoError(t, err, "a run listed again is downloadable")
	require.Len(t, a.objects, 3*keptRuns)
}
