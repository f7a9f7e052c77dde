package benchmark

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func elements(t *testing.T, doc string, shape Shape) []string {
	t.Helper()
	var out []string
	_, err := NewReader().ReadElements(strings.NewReader(doc), shape, func(e *Element) error {
		out = append(out, string(e.Raw))
		return nil
	})
	require.NoError(t, err)
	return out
}

// The same row written with different indentation (a per-job file and the
// aggregate) yields equal raw bytes; strings keep their spaces.
func TestElementRawIsCompact(t *testing.T) {
	row := map[string]any{"hw": "b200 x", "conc": 64, "p99.9_ttft": 4.42, "router": map[string]any{"name": "a b", "v": []any{1, 2}}, "ok": true}
	two, err := json.MarshalIndent(row, "", "  ")
	require.NoError(t, err)
	four, err := json.MarshalIndent([]any{row, row}, "    ", "    ")
	require.NoError(t, err)
	flat, err := json.Marshal(row)
	require.NoError(t, err)

	perJob := elements(t, string(two), ObjectOrArray)
	agg := elements(t, string(four), ArrayOnly)
	require.Len(t, agg, 2)
	require.Equal(t, perJob[0], agg[0])
	require.Equal(t, agg[0], agg[1])
	require.Contains(t, perJob[0], `"b200 x"`)
	require.Contains(t, perJob[0], `"a b"`)
	require.Less(t, len(perJob[0]), len(two))
	var back map[string]any
	require.NoError(t, json.Unmarshal([]byte(perJob[0]), &back))
	var want map[string]any
	require.NoError(t, json.Unmarshal(flat, &want))
	require.Equal(t, want, back)
}

// Compaction never turns invalid JSON into valid JSON.
func TestCompactionKeepsTokensApart(t *testing.T) {
	for _, doc := range []string{`[{"a": tru e}]`, `[{"a": 1 2}]`, `[{"a": 1` + "\n\t" + `2}]`, `[{"a": nu ll}]`, `[{"a": -1 .5}]`} {
		rows, err := ReadRows(strings.NewReader(doc), ArrayOnly, func(_ int, row map[string]any, err error) error {
			require.Error(t, err, doc)
			require.Nil(t, row)
			return nil
		})
		require.NoError(t, err, doc)
		require.Equal(t, 1, rows)
	}
}
