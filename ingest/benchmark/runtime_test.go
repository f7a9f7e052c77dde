package benchmark

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Runtime components become flat string metrics, with the facts of the
// reference's etl/runtime-metadata.test.ts: values trimmed, the current
// {name, version} objects and the legacy strings both read, empty or
// malformed components ignored (a version without a name is kept).
func TestRuntimeMetadata(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, row string
		want      map[string]any
	}{
		{"current component objects keep their versions",
			`{"kv_offloading": " dram ", "kv_offload_backend": {"name": "mooncake", "version": "0.3.11.post1"},
			  "kv_p2p_transfer": "mori", "router": {"name": "sglang-router", "version": "0.3.2"}}`,
			map[string]any{"kv_offloading": "dram", "kv_offload_backend": "mooncake", "kv_offload_backend_version": "0.3.11.post1",
				"kv_p2p_transfer": "mori", "router_name": "sglang-router", "router_version": "0.3.2"}},
		{"legacy backend string, empty and malformed components",
			`{"kv_offload_backend": "hicache", "kv_p2p_transfer": "", "router": {"name": "", "version": "0.1.14"}}`,
			map[string]any{"kv_offload_backend": "hicache", "router_version": "0.1.14"}},
		{"non-string values are no components",
			`{"kv_offloading": true, "kv_offload_backend": ["lmcache"], "kv_p2p_transfer": 3, "router": {"name": 7}}`,
			map[string]any{}},
		{"blank strings", `{"kv_offloading": "  ", "kv_offload_backend": {"name": " ", "version": " 1.0 "}, "router": "  "}`,
			map[string]any{"kv_offload_backend_version": "1.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var row map[string]any
			require.NoError(t, json.NewDecoder(strings.NewReader(c.row)).Decode(&row))
			got := map[string]any{}
			addRuntimeMetadata(row, got)
			require.Equal(t, c.want, got)
		})
	}
}

// kv_transfer_lib is read trimmed and in lower case; an empty or
// non-string value names no library.
func TestKVTransferLib(t *testing.T) {
	for _, tc := range []struct {
		row  string
		want *string
	}{
		{`{"kv_transfer_lib": " NIXL "}`, func() *string { s := "nixl"; return &s }()},
		{`{"kv_transfer_lib": "mooncake"}`, func() *string { s := "mooncake"; return &s }()},
		{`{"kv_transfer_lib": ""}`, nil},
		{`{"kv_transfer_lib": 3}`, nil},
		{`{}`, nil},
	} {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(tc.row), &row))
		require.Equal(t, tc.want, kvTransferLib(row), tc.row)
	}
}
