package source

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// deferredTree writes a tree with a folder artifact (a nested file too), a
// zip artifact and a listing, and opens it.
func deferredTree(t *testing.T) (*Tree, string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_a", "a.json"), `{"conc": 4}`)
	writeFile(t, filepath.Join(dir, "bmk_a", "sub", "b.json"), `[1, 2]`)
	writeZip(t, filepath.Join(dir, "bmk_z.zip"), []zipEntry{{name: "z.json", body: `{"conc": 8}`}})
	writeFile(t, filepath.Join(dir, "artifacts.json"), `{"artifacts": []}`)
	tree, err := Open(context.Background(), dir, nil)
	require.NoError(t, err)
	return tree, dir
}

func artifactNamed(t *testing.T, tree *Tree, name string) *Artifact {
	t.Helper()
	for _, a := range tree.Artifacts {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no artifact %s", name)
	return nil
}

func sumOf(b string) [sha256.Size]byte { return sha256.Sum256([]byte(b)) }

// TestDeferredDigestTakesReadSums: a deferred digest equals the digest of
// reading every file; it takes the sum of a file reported read in full
// with the size the walk saw (a wrong sum shows it was not read again),
// ignores one reported with another size or from a zip's members, learns
// a zip's sum from its load, and ignores reports before Watch or from a
// tree with another root.
func TestDeferredDigestTakesReadSums(t *testing.T) {
	ctx := context.Background()
	_, dir := deferredTree(t)
	full, _, _ := treeDigest(t, dir, nil)
	lie := sumOf("something else")

	for _, tc := range []struct {
		name  string
		read  func(t *testing.T, tree *Tree)
		equal bool // the digest is the one of reading every file
	}{
		{"nothing reported", func(*testing.T, *Tree) {}, true},
		{"true sums", func(t *testing.T, tree *Tree) {
			a := artifactNamed(t, tree, "bmk_a")
			a.FileRead("a.json", 11, sumOf(`{"conc": 4}`))
			a.FileRead("sub/b.json", 6, sumOf(`[1, 2]`))
		}, true},
		{"a wrong sum is believed", func(t *testing.T, tree *Tree) {
			artifactNamed(t, tree, "bmk_a").FileRead("sub/b.json", 6, lie)
		}, false},
		{"a partial read is not taken", func(t *testing.T, tree *Tree) {
			artifactNamed(t, tree, "bmk_a").FileRead("sub/b.json", 5, lie)
		}, true},
		{"a zip's members are not the tree's files", func(t *testing.T, tree *Tree) {
			artifactNamed(t, tree, "bmk_z").FileRead("z.json", 11, lie)
		}, true},
		{"a zip's load reports the zip", func(t *testing.T, tree *Tree) {
			require.NoError(t, artifactNamed(t, tree, "bmk_z").Load())
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := Open(ctx, dir, nil)
			require.NoError(t, err)
			d := StartDigest(ctx, dir)
			d.Watch(tree)
			d.Defer(nil)
			tc.read(t, tree)
			got, _, err := d.Wait(ctx)
			require.NoError(t, err)
			if tc.equal {
				require.Equal(t, full, got)
			} else {
				require.NotEqual(t, full, got)
			}
		})
	}

	t.Run("the zip's sum is taken", func(t *testing.T) {
		tree, err := Open(ctx, dir, nil)
		require.NoError(t, err)
		d := StartDigest(ctx, dir)
		d.Watch(tree)
		require.NoError(t, artifactNamed(t, tree, "bmk_z").Load())
		reads := d.reads.take()
		require.Len(t, reads, 1)
		for k := range reads {
			require.Equal(t, readKey{sink: artifactNamed(t, tree, "bmk_z").sink.Load()}, k, "the zip itself is reported")
			require.Equal(t, "bmk_z.zip", k.sink.name)
		}
		d.Stop()
	})

	t.Run("reports before Watch or from another tree are ignored", func(t *testing.T) {
		tree, err := Open(ctx, dir, nil)
		require.NoError(t, err)
		_, other := deferredTree(t)
		otherTree, err := Open(ctx, other, nil)
		require.NoError(t, err)
		d := StartDigest(ctx, dir)
		artifactNamed(t, tree, "bmk_a").FileRead("a.json", 11, lie)
		d.Watch(otherTree)
		artifactNamed(t, otherTree, "bmk_a").FileRead("a.json", 11, lie)
		d.Defer(nil)
		got, _, err := d.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, full, got)
	})

	t.Run("a deferred digest that is stopped fails its Wait", func(t *testing.T) {
		d := StartDigest(ctx, dir)
		d.Defer(nil)
		d.Stop()
		_, _, err := d.Wait(ctx)
		require.ErrorIs(t, err, errStopped)
	})
}
