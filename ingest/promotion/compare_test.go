package promotion_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/promotion"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	staged := json.RawMessage(`[
		{"name":"a","container":"dir","size":10,"filesDigest":"sha256:aa","filesRead":2},
		{"name":"b","container":"zip","size":20,"digest":"sha256:b1","filesDigest":"sha256:bb","filesRead":1},
		{"name":"gone","container":"dir","size":1,"filesRead":1},
		{"name":"expired","container":"dir","size":0,"filesRead":0,"error":"expired"}]`)
	tree := []byte{1, 2, 3}
	st := promotion.Staged{IngestID: 7, Target: "staging", Attempt: 1, TreeDigest: promotion.TreeDigest(tree), Artifacts: staged}

	same, err := promotion.Compare(st, promotion.Input{Attempt: 1, Tree: tree, Records: staged})
	require.NoError(t, err)
	require.True(t, same.SameInputs)
	require.Empty(t, same.Differences)
	require.Equal(t, int64(7), same.StagedIngestID)

	// Every artifact read is the same, the tree is not (the listing changed).
	other, err := promotion.Compare(st, promotion.Input{Attempt: 1, Tree: []byte{9}, Records: staged})
	require.NoError(t, err)
	require.False(t, other.SameInputs)
	require.Equal(t, []schema.ArtifactDifference{{Artifact: "(tree)", Change: "changed",
		Detail: "the tree digest differs: a file outside the artifacts read (such as artifacts.json) changed"}}, other.Differences)

	now := json.RawMessage(`[
		{"name":"a","container":"dir","size":10,"filesDigest":"sha256:a2","filesRead":2},
		{"name":"b","container":"zip","size":21,"digest":"sha256:b2","filesDigest":"sha256:bb","filesRead":1},
		{"name":"new","container":"dir","size":5,"filesRead":1},
		{"name":"expired","container":"dir","size":3,"filesRead":1}]`)
	diff, err := promotion.Compare(st, promotion.Input{Attempt: 1, Tree: []byte{9}, Records: now})
	require.NoError(t, err)
	require.False(t, diff.SameInputs)
	require.Equal(t, []schema.ArtifactDifference{
		{Artifact: "a", Change: "changed", Detail: "file contents differ"},
		{Artifact: "b", Change: "changed", Detail: "size 21, staged 20; zip digest differs"},
		{Artifact: "expired", Change: "changed", Detail: "size 3, staged 0; 1 files read, staged 0; readable now, staged: expired"},
		{Artifact: "gone", Change: "removed"},
		{Artifact: "new", Change: "added"},
	}, diff.Differences)

	// A staged ingest without a tree digest is never "the same".
	old := st
	old.TreeDigest = ""
	unknown, err := promotion.Compare(old, promotion.Input{Attempt: 1, Tree: tree, Records: staged})
	require.NoError(t, err)
	require.False(t, unknown.SameInputs)
	require.Equal(t, "unknown", unknown.Differences[0].Change)

	_, err = promotion.Compare(st, promotion.Input{Attempt: 1, Tree: tree, Records: json.RawMessage(`{`)})
	require.Error(t, err)

	// Another attempt of the run is other inputs, whatever its bytes.
	retry, err := promotion.Compare(st, promotion.Input{Attempt: 2, Tree: tree, Records: staged})
	require.NoError(t, err)
	require.False(t, retry.SameInputs)
	require.Equal(t, []schema.ArtifactDifference{{Artifact: "(run)", Change: "changed", Detail: "attempt 2, staged attempt 1"}},
		retry.Differences)
}

// digestOf is the tree digest and file index of a tree holding files
// (path → content).
func digestOf(t *testing.T, files map[string]string) ([]byte, []byte) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	sum, index, err := source.StartDigest(t.Context(), dir).Wait(t.Context())
	require.NoError(t, err)
	return sum, index
}

// TestCompareNamesTheFile: a file that differs where no artifact record
// does (one the ingest did not read) is named under the artifact holding
// it, not blamed on "a file outside the artifacts read"; one outside every
// artifact is named as such.
func TestCompareNamesTheFile(t *testing.T) {
	t.Parallel()
	records := json.RawMessage(`[{"name":"bmk_a","container":"dir","size":12,"filesDigest":"sha256:aa","filesRead":1}]`)
	base := map[string]string{"artifacts.json": "{}", "bmk_a/a.json": `{"conc":4}`, "bmk_a/notes.txt": "aa"}
	sum, index := digestOf(t, base)
	st := promotion.Staged{IngestID: 3, Target: "staging", Attempt: 1, TreeDigest: promotion.TreeDigest(sum), Artifacts: records, FileIndex: index}

	same, err := promotion.Compare(st, promotion.Input{Attempt: 1, Tree: sum, FileIndex: index, Records: records})
	require.NoError(t, err)
	require.True(t, same.SameInputs, "%+v", same.Differences)

	for _, tc := range []struct {
		name  string
		edit  func(map[string]string)
		wants []schema.ArtifactDifference
	}{
		{"a file inside an artifact", func(m map[string]string) { m["bmk_a/notes.txt"] = "bb" },
			[]schema.ArtifactDifference{{Artifact: "bmk_a", Change: "changed", Detail: "file notes.txt changed"}}},
		{"a file added inside an artifact", func(m map[string]string) { m["bmk_a/sub/extra.log"] = "x" },
			[]schema.ArtifactDifference{{Artifact: "bmk_a", Change: "changed", Detail: "file sub/extra.log added"}}},
		{"the listing", func(m map[string]string) { m["artifacts.json"] = "[]" },
			[]schema.ArtifactDifference{{Artifact: "(tree)", Change: "changed", Detail: "file artifacts.json changed (outside the artifacts)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			tc.edit(files)
			sum, index := digestOf(t, files)
			got, err := promotion.Compare(st, promotion.Input{Attempt: 1, Tree: sum, FileIndex: index, Records: records})
			require.NoError(t, err)
			require.False(t, got.SameInputs)
			require.Equal(t, tc.wants, got.Differences)
		})
	}
}
