package benchmark

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExtractWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // JSON, "" for nil
	}{
		{"null", `null`, ""},
		{"string", `"not-an-array"`, ""},
		{"number", `42`, ""},
		{"object", `{"role":"prefill"}`, ""},
		{"empty", `[]`, ""},
		{"all malformed", `[null, "bad", 0]`, ""},
		{"drops malformed entries", `[
			{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500},
			{"worker_idx":1,"num_gpus":4,"avg_power_w":500},
			{"role":"decode","worker_idx":0,"num_gpus":4},
			{"role":"decode","worker_idx":-1,"num_gpus":4,"avg_power_w":1},
			{"role":"frontend","worker_idx":0,"num_gpus":0,"avg_power_w":0}]`,
			`[{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500},
			  {"role":"frontend","worker_idx":0,"num_gpus":0,"avg_power_w":0}]`},
		{"coerces numeric strings", `[{"role":"decode","worker_idx":"2","num_gpus":"8","avg_power_w":"712.5","avg_temp_c":"71.5"}]`,
			`[{"role":"decode","worker_idx":2,"num_gpus":8,"avg_power_w":712.5,"avg_temp_c":71.5}]`},
		{"hosts must be all strings", `[
			{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500,"hosts":"pn0"},
			{"role":"decode","worker_idx":0,"num_gpus":4,"avg_power_w":500,"hosts":["dn0",42]},
			{"role":"agg","worker_idx":0,"num_gpus":4,"avg_power_w":500,"hosts":["ok"]}]`,
			`[{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500},
			  {"role":"decode","worker_idx":0,"num_gpus":4,"avg_power_w":500},
			  {"role":"agg","worker_idx":0,"hosts":["ok"],"num_gpus":4,"avg_power_w":500}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, o := extractWorkers(decodeJSON(t, tt.in))
			require.Nil(t, o)
			if tt.want == "" {
				require.Nil(t, got)
				return
			}
			require.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestExtractPowerInvalidReasons(t *testing.T) {
	t.Parallel()
	many := make([]string, 40)
	for i := range many {
		many[i] = `"r` + strings.Repeat("x", i) + `"`
	}
	tests := []struct {
		name, in string
		want     string
	}{
		{"absent", `null`, ""},
		{"empty", `[]`, ""},
		{"not an array", `"telemetry_file_missing"`, ""},
		{"kept and deduplicated", `["telemetry_file_missing", "gpu_count_mismatch", "telemetry_file_missing"]`,
			`["telemetry_file_missing", "gpu_count_mismatch"]`},
		{"invalid codes dropped", `["Upper", "1digit", "has space", "", 7, "` + strings.Repeat("a", 65) + `", "ok_1"]`, `["ok_1"]`},
		{"at most 32", `[` + strings.Join(many, ",") + `]`, `[` + strings.Join(many[:32], ",") + `]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extractPowerInvalidReasons(decodeJSON(t, tt.in))
			if tt.want == "" {
				require.Nil(t, got)
				return
			}
			require.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestExtractPowerAudit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string
	}{
		{"absent", `null`, ""},
		{"not an object", `[1]`, ""},
		{"nothing valid", `{"source": "/abs/path.json", "sample_count": -1, "window_start_unix": "soon"}`, ""},
		{"full", `{"source":"LOGS/power/validation.json","window_start_unix":1700000100.5,"window_end_unix":1700000110,
			"expected_gpu_count":8,"observed_gpu_count":8,"sample_count":120,"max_sample_gap_s":1.25,
			"observed_gpu_ids":["0","1","1",""],"producer_sha":" abc123 ","exporter_image_sha256":"` + strings.Repeat("f", 64) + `",
			"extra":"ignored"}`,
			`{"source":"LOGS/power/validation.json","window_start_unix":1700000100.5,"window_end_unix":1700000110,
			"expected_gpu_count":8,"observed_gpu_count":8,"sample_count":120,"max_sample_gap_s":1.25,
			"observed_gpu_ids":["0","1"],"producer_sha":"abc123","exporter_image_sha256":"` + strings.Repeat("f", 64) + `"}`},
		{"unsafe source and bad counts dropped", `{"source":"../etc/passwd","observed_gpu_count":0,"expected_gpu_count":2.5,
			"sample_count":"34","producer_sha":"` + strings.Repeat("a", 129) + `"}`,
			`{"observed_gpu_count":0}`},
		{"source with forbidden characters", `{"source":"a b.json","sample_count":3}`, `{"sample_count":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extractPowerAudit(decodeJSON(t, tt.in))
			if tt.want == "" {
				require.Nil(t, got)
				return
			}
			require.JSONEq(t, tt.want, string(got))
		})
	}
}
