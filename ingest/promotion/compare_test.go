package promotion_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/promotion"
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
	st := promotion.Staged{IngestID: 7, Target: "staging", TreeDigest: promotion.TreeDigest(tree), Artifacts: staged}

	same, err := promotion.Compare(st, tree, staged)
	require.NoError(t, err)
	require.True(t, same.SameInputs)
	require.Empty(t, same.Differences)
	require.Equal(t, int64(7), same.StagedIngestID)

	// Every artifact read is the same, the tree is not (the listing changed).
	other, err := promotion.Compare(st, []byte{9}, staged)
	require.NoError(t, err)
	require.False(t, other.SameInputs)
	require.Equal(t, []schema.ArtifactDifference{{Artifact: "(tree)", Change: "changed",
		Detail: "the tree digest differs: a file outside the artifacts read (such as artifacts.json) changed"}}, other.Differences)

	now := json.RawMessage(`[
		{"name":"a","container":"dir","size":10,"filesDigest":"sha256:a2","filesRead":2},
		{"name":"b","container":"zip","size":21,"digest":"sha256:b2","filesDigest":"sha256:bb","filesRead":1},
		{"name":"new","container":"dir","size":5,"filesRead":1},
		{"name":"expired","container":"dir","size":3,"filesRead":1}]`)
	diff, err := promotion.Compare(st, []byte{9}, now)
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
	unknown, err := promotion.Compare(old, tree, staged)
	require.NoError(t, err)
	require.False(t, unknown.SameInputs)
	require.Equal(t, "unknown", unknown.Differences[0].Change)

	_, err = promotion.Compare(st, tree, json.RawMessage(`{`))
	require.Error(t, err)
}
