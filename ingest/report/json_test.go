package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestJSONGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary *schema.Summary
		golden  string
	}{
		{"success with nil lists", exampleSummary(), "json_success.golden"},
		{"completed with failures", failuresSummary(), "json_failures.golden"},
		{"no benchmark data", noBenchmarkSummary(), "json_no_benchmark_data.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, JSON(&buf, tt.summary))
			requireGolden(t, tt.golden, buf.String())

			var back schema.Summary
			require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
			require.Equal(t, tt.summary.Rows, back.Rows)
			require.Equal(t, tt.summary.Stats, back.Stats)
			require.True(t, tt.summary.StartedAt.Equal(back.StartedAt))
		})
	}
}

func TestJSONRendersEmptyListsAndKeepsInput(t *testing.T) {
	t.Parallel()
	s := &schema.Summary{Status: schema.StatusSucceeded}
	var buf bytes.Buffer
	require.NoError(t, JSON(&buf, s))
	require.NotContains(t, buf.String(), "null")
	require.Equal(t, byte('\n'), buf.Bytes()[buf.Len()-1])

	var generic map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &generic))
	for _, key := range []string{"failures", "notes"} {
		require.Equal(t, []any{}, generic[key], key)
	}
	unmapped := generic["unmapped"].(map[string]any)
	for _, key := range []string{"models", "hardware", "precisions", "frameworks", "specMethods", "datasets"} {
		require.Equal(t, []any{}, unmapped[key], key)
	}
	require.Equal(t, []any{}, generic["details"].(map[string]any)["unknownMetrics"])

	require.Nil(t, s.Failures, "the summary itself is not modified")
	require.Nil(t, s.Unmapped.Models)
}

func TestJSONNilSummary(t *testing.T) {
	t.Parallel()
	require.Error(t, JSON(&bytes.Buffer{}, nil))
}
