package archive_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/schema"
)

func zipOf(t *testing.T, file, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(file)
	require.NoError(t, err)
	_, err = w.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func put(t *testing.T, root, name string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

const (
	runA = int64(28400000101) // with artifacts_metadata.json, a re-upload
	runB = int64(28400000102) // names only
)

// mirror writes a small archive: run A on 2026-01-05 with its metadata and
// bmk_x uploaded twice, run B on 2026-02-01 without metadata, and folders
// that are no runs.
func mirror(t *testing.T) string {
	root := t.TempDir()
	a := "2026-01-05/Full_Sweep_28400000101/artifacts/"
	put(t, root, a+"bmk_x_5000000001.zip", zipOf(t, "r.json", `{"old":1}`))
	put(t, root, a+"bmk_x_5000000003.zip", zipOf(t, "r.json", `{"new":1}`))
	put(t, root, a+"server_logs_x_5000000002.zip", zipOf(t, "server.log", "log"))
	put(t, root, a+archive.MetadataFile, []byte(`[
	 {"id":5000000001,"name":"bmk_x","created_at":"2026-01-05T10:00:00Z","workflow_run":{"id":28400000101,"head_branch":"main","head_sha":"abc123"}},
	 {"id":5000000002,"name":"server_logs_x","created_at":"2026-01-05T09:00:00Z","workflow_run":{"id":28400000101,"head_branch":"main","head_sha":"abc123"}},
	 {"id":5000000003,"name":"bmk_x","created_at":"2026-01-05T12:00:00Z","workflow_run":{"id":28400000101,"head_branch":"main","head_sha":"abc123"}}]`))
	put(t, root, "2026-02-01/Nightly_28400000102/artifacts/bmk_y_5000000010.zip", zipOf(t, "r.json", `{"y":1}`))
	put(t, root, "2026-02-01/Other_123/artifacts/bmk_z_1.zip", zipOf(t, "r.json", `{}`)) // no run id of ten digits
	put(t, root, "notes/readme.txt", []byte("not a date"))
	return root
}

// open opens the mirror as a local directory or behind the fake GCS.
func open(t *testing.T, root, backend string) *archive.Archive {
	t.Helper()
	ctx := context.Background()
	if backend == "mirror" {
		a, err := archive.Open(ctx, root, archive.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		return a
	}
	_, opts := archivetest.Serve(t, root, "backup", "pre")
	a, err := archive.Open(ctx, "gs://backup/pre", opts)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

func TestArchiveRunsAndContents(t *testing.T) {
	for _, backend := range []string{"mirror", "gcs"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			a := open(t, mirror(t), backend)
			runs, err := a.Runs(ctx)
			require.NoError(t, err)
			require.Len(t, runs, 2)
			require.Equal(t, runA, runs[0].ID)
			require.Equal(t, "Full_Sweep", runs[0].Workflow)
			require.Equal(t, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), runs[0].Date)
			require.Equal(t, runB, runs[1].ID)

			got, err := a.Contents(ctx, runA)
			require.NoError(t, err)
			require.True(t, got.HasMetadata)
			require.Equal(t, "abc123", got.Meta.HeadSHA)
			require.Equal(t, "main", got.Meta.HeadBranch)
			require.Equal(t, time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), got.Meta.CreatedAt)
			var ids []int64
			for _, u := range got.Uploads {
				ids = append(ids, u.ID)
			}
			require.Equal(t, []int64{5000000001, 5000000002, 5000000003}, ids, "every upload, re-uploads included")

			b, err := a.Contents(ctx, runB)
			require.NoError(t, err)
			require.False(t, b.HasMetadata)
			require.Equal(t, "Nightly", b.Meta.Name)
			require.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), b.Meta.CreatedAt)
			require.Contains(t, b.Inferred, "created_at is the archive's date folder 2026-02-01")
			require.True(t, b.Uploads[0].CreatedAt.IsZero())

			none, err := a.Contents(ctx, 28400000999)
			require.NoError(t, err)
			require.Nil(t, none)
		})
	}
}

func TestArchiveDownloadVerifies(t *testing.T) {
	for _, backend := range []string{"mirror", "gcs"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			root := mirror(t)
			a := open(t, root, backend)
			got, err := a.Contents(ctx, runB)
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "5000000010.zip")
			n, cached, err := a.Download(ctx, got.Uploads[0], dst)
			require.NoError(t, err)
			require.False(t, cached)
			want, err := os.ReadFile(filepath.Join(root, "2026-02-01/Nightly_28400000102/artifacts/bmk_y_5000000010.zip"))
			require.NoError(t, err)
			require.Equal(t, int64(len(want)), n)
			have, err := os.ReadFile(dst)
			require.NoError(t, err)
			require.Equal(t, want, have)
			if backend == "mirror" {
				// A mirror's object is linked into the cache, not copied.
				src, err := os.Stat(filepath.Join(root, "2026-02-01/Nightly_28400000102/artifacts/bmk_y_5000000010.zip"))
				require.NoError(t, err)
				in, err := os.Stat(dst)
				require.NoError(t, err)
				require.True(t, os.SameFile(src, in), "the cache's file is the mirror's")
			}
			_, cached, err = a.Download(ctx, got.Uploads[0], dst)
			require.NoError(t, err)
			require.True(t, cached, "a verified file in the cache is not read again")

			// GitHub's digest, when the metadata gives one, is checked too.
			bad := got.Uploads[0]
			bad.Digest = "sha256:00"
			dst2 := filepath.Join(t.TempDir(), "x.zip")
			_, _, err = a.Download(ctx, bad, dst2)
			var ce *archive.CorruptError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.NoFileExists(t, dst2)

			// An object rewritten at another size since the listing is
			// refused, not placed.
			obj := filepath.Join(root, "2026-02-01/Nightly_28400000102/artifacts/bmk_y_5000000010.zip")
			require.NoError(t, os.WriteFile(obj, append(want, 0), 0o644))
			dst3 := filepath.Join(t.TempDir(), "y.zip")
			_, _, err = a.Download(ctx, got.Uploads[0], dst3)
			if backend == "mirror" {
				require.True(t, errors.As(err, &ce), "%v", err)
				require.NoFileExists(t, dst3)
			}
		})
	}
}

// TestArchiveDownloadCorruptObject: an object whose bytes do not match the
// CRC32C and MD5 the store lists (a byte flipped on the way) is refused,
// and nothing lands in the cache.
func TestArchiveDownloadCorruptObject(t *testing.T) {
	ctx := context.Background()
	_, opts := archivetest.Serve(t, mirror(t), "backup", "")
	a, err := archive.Open(ctx, "gs://backup", archivetest.Corrupting(opts, "bmk_y_5000000010.zip"))
	require.NoError(t, err)
	defer a.Close()
	got, err := a.Contents(ctx, runB)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "y.zip")
	_, _, err = a.Download(ctx, got.Uploads[0], dst)
	var ce *archive.CorruptError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.NoFileExists(t, dst)
	require.Empty(t, mustGlob(t, filepath.Join(filepath.Dir(dst), ".*.part")), "no partial file is left")
}

func mustGlob(t *testing.T, pattern string) []string {
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	return m
}

var _ = schema.ArchivedRun{}
