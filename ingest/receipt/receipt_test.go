package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sealed returns the receipt's JSON with receipt_id set to the sha256 of
// its canonical content, computed here by encoding/json (sorted map keys,
// no whitespace), not by the code under test.
func sealed(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	delete(doc, "receipt_id")
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	doc["receipt_id"] = hex.EncodeToString(sum[:])
	out, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	return out
}

func sampleReceipt() map[string]any {
	digest := strings.Repeat("ab", 32)
	return map[string]any{
		"kind": Kind, "version": 1, "repository": "SemiAnalysisAI/InferenceX", "source_run_id": "30000000001",
		"source_attempt": 1, "source_head_sha": strings.Repeat("c", 40), "bundle_digest": digest,
		"contracts": map[string]any{"raw": "aiperf-1.4", "normalized": "agentx-v1", "publication": 1},
		"points": []any{map[string]any{"point_id": digest, "execution_id": "e1", "kind": "throughput", "concurrency": 4,
			"artifact_ids": []any{7}, "normalized_artifact_id": 7, "normalized_path": "agg.json",
			"execution_artifact_id": 7, "execution_path": "execution.json"}},
		"artifacts": []any{map[string]any{"id": 7, "name": "bmk_x", "sha256": digest, "run_id": "30000000001",
			"members": []any{
				map[string]any{"path": "agg.json", "sha256": digest, "size": 10},
				map[string]any{"path": "execution.json", "sha256": digest, "size": 20},
			}}},
	}
}

func TestParse(t *testing.T) {
	r, err := Parse(sealed(t, sampleReceipt()))
	require.NoError(t, err)
	require.Len(t, r.Artifacts, 1)
	require.Equal(t, []Member{{"agg.json", strings.Repeat("ab", 32), 10}, {"execution.json", strings.Repeat("ab", 32), 20}}, r.Artifacts[0].Members)
	require.Equal(t, map[string]map[string]bool{"bmk_x": {"execution.json": true}}, r.ExecutionPaths())

	for _, c := range []struct {
		name   string
		edit   func(map[string]any)
		reseal bool
		reason string
	}{
		{"content changed after sealing", func(d map[string]any) { d["source_attempt"] = 2 }, false, "does not match its content"},
		{"another kind", func(d map[string]any) { d["kind"] = "other" }, true, `unsupported receipt kind "other"`},
		{"version 2", func(d map[string]any) { d["version"] = 2 }, true, "version 2"},
		{"a fraction", func(d map[string]any) { d["source_attempt"] = 1.5 }, true, "not a safe integer"},
		{"member path with ..", func(d map[string]any) {
			d["artifacts"].([]any)[0].(map[string]any)["members"].([]any)[0].(map[string]any)["path"] = "../x"
		}, true, "artifact bmk_x: member 0: invalid"},
		{"member sha256 not hex", func(d map[string]any) {
			d["artifacts"].([]any)[0].(map[string]any)["members"].([]any)[1].(map[string]any)["sha256"] = "xyz"
		}, true, "artifact bmk_x: member 1: invalid"},
		{"execution in no artifact", func(d map[string]any) {
			d["points"].([]any)[0].(map[string]any)["execution_artifact_id"] = 8
		}, true, "point 0: execution record names no artifact"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := sampleReceipt()
			var data []byte
			if c.reseal {
				c.edit(doc)
				data = sealed(t, doc)
			} else {
				data = sealed(t, doc)
				var again map[string]any
				require.NoError(t, json.Unmarshal(data, &again))
				c.edit(again)
				var err error
				data, err = json.Marshal(again)
				require.NoError(t, err)
			}
			_, err := Parse(data)
			require.ErrorContains(t, err, c.reason)
		})
	}
	_, err = Parse([]byte(`{"kind": "source-measurement-receipt", "version": 1,`))
	require.ErrorContains(t, err, "not JSON")
}

func TestIsExecutionRecord(t *testing.T) {
	require.True(t, IsExecutionRecord("execution.json", nil))
	require.True(t, IsExecutionRecord("conc_4/execution.json", nil))
	require.False(t, IsExecutionRecord("agg_execution.json", nil))
	require.True(t, IsExecutionRecord("evidence/run.json", map[string]bool{"evidence/run.json": true}))
}
