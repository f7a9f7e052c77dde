package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustDefault(t *testing.T) *Catalog {
	t.Helper()
	c, err := Default()
	require.NoError(t, err)
	return c
}

func TestDefaultModelIDsTargetModelKeys(t *testing.T) {
	t.Parallel()
	f, err := decodeFile(embedded)
	require.NoError(t, err)
	require.NotEmpty(t, f.ModelIDs)
	for id, key := range f.ModelIDs {
		_, ok := f.Models[key]
		require.Truef(t, ok, "model id %q maps to %q, which is not a model key", id, key)
	}
	for alias, key := range f.ModelPrefixAliases {
		_, ok := f.Models[key]
		require.Truef(t, ok, "prefix alias %q maps to %q, which is not a model key", alias, key)
	}
	c := mustDefault(t)
	for id, want := range f.ModelIDs {
		got, ok := c.ResolveModel("", id)
		require.True(t, ok, id)
		require.Equal(t, want, got, id)
	}
}

func TestResolveModel(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	tests := []struct {
		prefix, model string
		want          string
		ok            bool
	}{
		{"dsr1", "", "dsr1", true},
		{"DSR1", "", "dsr1", true},
		{"gptoss", "", "gptoss120b", true},
		{"dsv4pro", "", "dsv4", true},
		{"kimik2.7", "", "kimik2.7-code", true},
		{"dsr1-fp4", "", "dsr1", true},
		{"dsr1-FP8", "", "dsr1", true},
		{"dsr1-nvfp4-v2", "", "dsr1", true},
		{"gptoss-mxfp4", "", "gptoss120b", true},
		{"dsv41flash", "deepseek-ai/DeepSeek-V4.1-Flash", "dsv41flash", true},
		{"", "nvidia/DeepSeek-R1-0528-FP4-V2", "dsr1", true},
		{"", "moonshotai/Kimi-K2.7-Code", "kimik2.7-code", true},
		{"nonexistent_model_xyz", "openai/gpt-oss-120b", "gptoss120b", true},
		{"", "NVIDIA/DeepSeek-R1-0528-FP4-V2", "", false}, // model ids are exact
		{"nonexistent_model_xyz", "", "", false},
		{"dsr1fp4", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		got, ok := c.ResolveModel(tt.prefix, tt.model)
		require.Equal(t, tt.ok, ok, "%q/%q", tt.prefix, tt.model)
		require.Equal(t, tt.want, got, "%q/%q", tt.prefix, tt.model)
	}
}

func TestResolveHardware(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	tests := []struct {
		hw   string
		want string
	}{
		{"h200-nv", "h200"}, {"b200-nv", "b200"}, {"gb300-nv", "gb300"},
		{"mi355x-amd", "mi355x"}, {"mi355x-amds", "mi355x"},
		{"cluster:b300-nv", "b300"}, {"cluster:h200", "h200"}, {"cluster:h100-dgxc", "h100"},
		{"h100-trt", "h100"}, {"h200-multinode-slurm", "h200"}, {"b200-multinode", "b200"},
		{"h100-nvs", "h100"}, {"h200-disagg", "h200"}, {"b200-nvd", "b200"}, {"gb200-dgxc", "gb200"},
		{"b200-dgxc-slurm", "b200"}, {"h200-dgxc-slurm", "h200"}, {"h100-dgxc-slurm", "h100"},
		{"b300-nb", "b300"}, {"b200-dsv4", "b200"}, {"B200-DSV4", "b200"}, {"gb300-cw", "gb300"},
		{"rtx6000pro-lat", "rtx6000pro"}, {"mi355x-amd_0", "mi355x"}, {"H200-NV", "h200"},
		{"mi355x_0", "mi355x"}, {"b200-dgxc_09", "b200"}, {"cluster:mi325x-amds", "mi325x"},
		{"b200", "b200"}, {"tpuv7", "tpuv7"},
		{"a100-nv", ""}, {"v100", ""}, {"", ""}, {"unknown-gpu", ""}, {"imaginary-nv", ""},
		{"imaginary-gpu-999", ""}, {"cluster:", ""}, {"_0", ""},
	}
	for _, tt := range tests {
		got, ok := c.ResolveHardware(tt.hw)
		require.Equal(t, tt.want != "", ok, tt.hw)
		require.Equal(t, tt.want, got, tt.hw)
	}
}

func TestResolveFramework(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	tests := []struct {
		fw         string
		disagg     any
		wantFW     string
		wantDisagg bool
		wantKnown  bool
	}{
		{"VLLM", false, "vllm", false, true},
		{"dynamo-trtllm", false, "dynamo-trt", false, true},
		{"dynamo-trtllm", nil, "dynamo-trt", true, true},
		{"vllm", "True", "vllm", true, true},
		{"vllm", "true", "vllm", true, true},
		{"vllm", true, "vllm", true, true},
		{"vllm", "false", "vllm", false, true},
		{"vllm", false, "vllm", false, true},
		{"vllm", nil, "vllm", false, true},
		{"sglang-disagg", false, "mori-sglang", true, true},
		{"atom-disagg", nil, "mooncake-atom", true, true},
		{"trtllm", nil, "trt", false, true},
		{"dynamo-sglang", "false", "dynamo-sglang", false, true},
		{"dynamo-vllm", nil, "dynamo-vllm", true, true},
		{"mori-sglang", false, "mori-sglang", true, true},
		{"vllm-disagg", nil, "vllm-disagg", false, false},
		{"", nil, "", false, false},
	}
	for _, tt := range tests {
		fw, disagg, known := c.ResolveFramework(tt.fw, tt.disagg)
		require.Equal(t, tt.wantFW, fw, "%q %v", tt.fw, tt.disagg)
		require.Equal(t, tt.wantDisagg, disagg, "%q %v", tt.fw, tt.disagg)
		require.Equal(t, tt.wantKnown, known, "%q %v", tt.fw, tt.disagg)
	}
}

func TestResolvePrecisionAndSpecMethod(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	precisions := []struct {
		in, want string
		ok       bool
	}{
		{"fp8", "fp8", true}, {"FP8", "fp8", true}, {"nvfp4", "fp4", true}, {"MXFP4", "fp4", true},
		{"bf16", "bf16", true}, {"int4", "int4", true}, {"", "", false}, {"fp6", "fp6", false},
	}
	for _, tt := range precisions {
		got, ok := c.ResolvePrecision(tt.in)
		require.Equal(t, tt.ok, ok, tt.in)
		require.Equal(t, tt.want, got, tt.in)
	}
	specs := []struct {
		in   any
		want string
		ok   bool
	}{
		{nil, "none", true}, {"", "none", true}, {"null", "none", true}, {"NONE", "none", true},
		{"mtp", "mtp", true}, {"Eagle", "eagle", true}, {"EAGLE3", "eagle3", true},
		{"draft_model", "draft_model", true}, {"dspark", "dspark", false}, {true, "", false},
	}
	for _, tt := range specs {
		got, ok := c.ResolveSpecMethod(tt.in)
		require.Equal(t, tt.ok, ok, "%v", tt.in)
		require.Equal(t, tt.want, got, "%v", tt.in)
	}
}

func TestMetricKeys(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	for _, k := range []string{"tput_per_gpu", "p99.9_ttft", "median_intvty", "std_full_response_itl",
		"p95_output_tokens_expected", "power_valid", "cpu_power_valid", "avg_power_w", "total_module_energy_j",
		"prefill_pp", "dp", "gpu_kv_cache_usage_pct", "pp", "kv_cache_pool_tokens", "allocated_cpu_dram_gb"} {
		require.True(t, c.IsKnownMetric(k), k)
		require.False(t, c.IsNonMetricKey(k), k)
	}
	for _, k := range []string{"request_goodput:", "hw", "zeta"} {
		require.False(t, c.IsKnownMetric(k), k)
	}
	for _, k := range []string{"hw", "recipe-fingerprint", "users", "benchmark_outcome", "num_aggregate_gpu"} {
		require.True(t, c.IsNonMetricKey(k), k)
	}
	measured := slices.Collect(c.WithheldPowerKeys(true))
	require.Len(t, measured, 24)
	require.Equal(t, "avg_power_w", measured[0])
	measured[0] = "mutated"
	require.Equal(t, "avg_power_w", slices.Collect(c.WithheldPowerKeys(true))[0], "catalog must not share its slices")
	// What a retired GPU power source loses: never a CPU-side key.
	for _, k := range []string{"avg_cpu_socket_power_w", "avg_total_cpu_power_w", "total_cpu_energy_j", "avg_total_module_power_w", "total_module_energy_j"} {
		require.NotContains(t, c.GPUPowerKeys(), k)
	}
	require.Contains(t, c.GPUPowerKeys(), "avg_power_w")
	name, ok := c.ModelDisplayName("dsr1")
	require.True(t, ok)
	require.Equal(t, "DeepSeek-R1-0528", name)
	require.Contains(t, c.GPUKeys(), "mi355x")
}

func TestLoadExtension(t *testing.T) {
	t.Parallel()
	base := mustDefault(t)
	_, ok := base.ResolveHardware("a100-nv")
	require.False(t, ok)

	ext := `{
	  "gpus": {"a100": "NVIDIA"},
	  "models": {"llama405b": "Llama-3.1-405B"},
	  "model_ids": {"meta-llama/Llama-3.1-405B-Instruct": "llama405b"},
	  "frameworks": ["vllm-disagg-x"],
	  "framework_aliases": {"vllm-disagg": {"canonical": "vllm", "disagg": true}},
	  "precision_aliases": {"e4m3": "fp8"},
	  "spec_methods": ["dspark"],
	  "metric_keys": ["pp"]
	}`
	c, err := Load(strings.NewReader(ext))
	require.NoError(t, err)
	gpu, ok := c.ResolveHardware("a100-nv")
	require.True(t, ok)
	require.Equal(t, "a100", gpu)
	key, ok := c.ResolveModel("", "meta-llama/Llama-3.1-405B-Instruct")
	require.True(t, ok)
	require.Equal(t, "llama405b", key)
	fw, disagg, known := c.ResolveFramework("vllm-disagg", false)
	require.Equal(t, []any{"vllm", true, true}, []any{fw, disagg, known})
	p, ok := c.ResolvePrecision("E4M3")
	require.True(t, ok)
	require.Equal(t, "fp8", p)
	_, ok = c.ResolveSpecMethod("DSpark")
	require.True(t, ok)
	require.True(t, c.IsKnownMetric("pp"))
	// The embedded data is still there, and the default catalog is unchanged.
	_, ok = c.ResolveHardware("cluster:b300-nv")
	require.True(t, ok)
	_, ok = base.ResolveHardware("a100-nv")
	require.False(t, ok)

	// Later extensions override earlier ones.
	c2, err := Load(strings.NewReader(`{"model_ids": {"x/y": "dsr1"}}`), strings.NewReader(`{"model_ids": {"x/y": "dsv4"}}`))
	require.NoError(t, err)
	key, _ = c2.ResolveModel("", "x/y")
	require.Equal(t, "dsv4", key)
}

func TestLoadMalformedExtension(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ext, wantErr string
	}{
		{"not json", `{"gpus": `, "catalog extension 1"},
		{"unknown key", `{"gpu": {"a100": "NVIDIA"}}`, `unknown field "gpu"`},
		{"wrong type", `{"gpus": ["a100"]}`, "catalog extension 1"},
		{"empty", ``, "empty document"},
		{"trailing", `{} {}`, "line 1, column 4: data after the JSON value"},
		{"duplicate top-level key", `{"gpus": {"a100": "NVIDIA"}, "gpus": {}}`, `line 1, column 30: duplicate key "gpus"`},
		{"duplicate nested key", `{"gpus": {"a100": "NVIDIA", "a100": "AMD"}}`, `duplicate key "gpus.a100"`},
		{"duplicate key in an alias", `{"framework_aliases": {"x": {"canonical": "vllm", "canonical": "sglang"}}}`, `duplicate key "framework_aliases.x.canonical"`},
		{"model id to unknown key", `{"model_ids": {"x/y": "nope"}}`, `"x/y": target "nope" is not a model key`},
		{"upper-case gpu", `{"gpus": {"A100": "NVIDIA"}}`, `gpus: "A100"`},
		{"gpu with dash", `{"gpus": {"a100-nv": "NVIDIA"}}`, `gpus: "a100-nv"`},
		{"alias to unknown framework", `{"framework_aliases": {"x": {"canonical": "nope"}}}`, `canonical "nope"`},
		{"unknown alias field", `{"framework_aliases": {"x": {"canonical": "vllm", "dis": true}}}`, `unknown field "dis"`},
		{"precision alias target", `{"precision_aliases": {"fp6": "fp5"}}`, `target "fp5"`},
		{"cpu key not measured", `{"cpu_power_keys": ["cpu_w"]}`, `"cpu_w" is not a measured power key`},
		{"metric also non-metric", `{"metric_keys": ["hw"]}`, `"hw" is also a metric key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(strings.NewReader(tt.ext))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestEmbeddedFileIsValidJSON(t *testing.T) {
	t.Parallel()
	require.True(t, json.Valid(embedded))
}

// TestWithheldPowerKeys: the power verdict withholds every measured key
// the catalog file names when it is not valid, and none when it is: the
// CPU-side keys are never withheld by a verdict of their own.
func TestWithheldPowerKeys(t *testing.T) {
	t.Parallel()
	c := mustDefault(t)
	f, err := decodeFile(embedded) // the contract as the catalog file states it
	require.NoError(t, err)
	require.Equal(t, f.MeasuredPowerKeys, slices.Collect(c.WithheldPowerKeys(true)))
	require.Empty(t, slices.Collect(c.WithheldPowerKeys(false)))
}
