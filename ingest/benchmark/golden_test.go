package benchmark

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenRow is what one input row normalizes to.
type goldenRow struct {
	Row     int                    `json:"row"`
	ReadErr string                 `json:"read_error,omitempty"`
	Outcome *Outcome               `json:"outcome,omitempty"`
	Point   *schema.BenchmarkPoint `json:"point,omitempty"`
}

// normalizeFile reads a benchmark file and normalizes each row.
func normalizeFile(t *testing.T, n *Normalizer, path string) []goldenRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []goldenRow
	rows, err := ReadRows(f, ObjectOrArray, func(index int, row map[string]any, rowErr error) error {
		g := goldenRow{Row: index}
		if rowErr != nil {
			g.ReadErr = rowErr.Error()
		} else {
			p, o := n.Normalize(row)
			g.Outcome = &o
			if o.Kind == OK {
				g.Point = &p
			}
		}
		out = append(out, g)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(out), rows)
	return out
}

func goldenInputs(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join("testdata", "rows", "*.json"))
	require.NoError(t, err)
	var inputs []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".golden.json") {
			inputs = append(inputs, p)
		}
	}
	require.NotEmpty(t, inputs)
	return inputs
}

func TestNormalizeGolden(t *testing.T) {
	t.Parallel()
	n := newTestNormalizer(t)
	for _, input := range goldenInputs(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(normalizeFile(t, n, input), "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			golden := strings.TrimSuffix(input, ".json") + ".golden.json"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -update to create %s", golden)
			require.Equal(t, string(want), string(got))
		})
	}
}

// normalizeOne normalizes the single row of a testdata file.
func normalizeOne(t *testing.T, name string) (schema.BenchmarkPoint, Outcome) {
	t.Helper()
	rows := normalizeFile(t, newTestNormalizer(t), filepath.Join("testdata", "rows", name))
	require.Len(t, rows, 1)
	require.Empty(t, rows[0].ReadErr)
	if rows[0].Point == nil {
		return schema.BenchmarkPoint{}, *rows[0].Outcome
	}
	return *rows[0].Point, *rows[0].Outcome
}

// The expectations below are the reference's derived expectations for the
// real fixtures of the public InferenceX projects and the documented row
// shapes of docs/formats.md.

func TestFixtureAgenticGoldenAgg(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "agentic_golden_agg.json")
	requireOK(t, o)
	require.Equal(t, schema.Config{
		Hardware: "h100", Framework: "sglang", Model: "qwen3.5", Precision: "fp8", SpecMethod: "none",
		PrefillTP: 1, PrefillEP: 1, DecodeTP: 1, DecodeEP: 1, NumPrefillGPU: 1, NumDecodeGPU: 1,
	}, p.Config)
	require.Equal(t, schema.BenchmarkAgenticTraces, p.BenchmarkType)
	require.Equal(t, 1, p.Conc)
	require.Equal(t, OffloadOff, p.OffloadMode)
	require.Equal(t, 250.0, p.Metrics["output_tput_per_gpu"])
	require.Equal(t, 1.0, p.Metrics["power_valid"])
	require.Equal(t, 500.0, p.Metrics["avg_power_w"])
	require.Equal(t, 1000.0, p.Metrics["total_gpu_energy_j"])
	require.NotContains(t, p.Metrics, "median_intvty", "no median_itl, so the interactivity is dropped")
}

func TestFixtureValidPower(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "valid_power.json")
	requireOK(t, o)
	require.Nil(t, p.RecipeFingerprint)
	require.Equal(t, "b200", p.Config.Hardware)
	require.Equal(t, [2]int{2, 2}, gpus(t, p.Config))
	require.Nil(t, p.PowerInvalidReasons)
	require.JSONEq(t, `{"source":"power_validation_benchmark_result.json","window_start_unix":1700000100,
		"window_end_unix":1700000110,"expected_gpu_count":2,"observed_gpu_count":2,"sample_count":34,
		"max_sample_gap_s":1,"observed_gpu_ids":["0","1"]}`, string(p.PowerAudit))
	for _, k := range []string{"pp", "dcp_size", "pcp_size"} {
		require.Equal(t, 1.0, p.Metrics[k], k)
	}
	require.Equal(t, 1000.0, p.Metrics["p90_total_gpu_power_w"])
	require.NotContains(t, p.Metrics, "benchmark_outcome")
	require.Empty(t, o.UnknownMetrics)
}

func TestFixtureMissingPower(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "missing_power.json")
	requireOK(t, o)
	require.Equal(t, 0.0, p.Metrics["power_valid"])
	require.Equal(t, 2.0, p.Metrics["power_metric_schema_version"])
	require.JSONEq(t, `["telemetry_file_missing"]`, string(p.PowerInvalidReasons))
	require.JSONEq(t, `{"source":"power_validation_benchmark_result.json","window_start_unix":1700000100,
		"window_end_unix":1700000110,"expected_gpu_count":2,"observed_gpu_count":0}`, string(p.PowerAudit))
}

func TestFixtureAgenticV3Attempt(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "agentic_v3_h100_retry_attempt1.json")
	requireOK(t, o)
	require.Equal(t, schema.Config{
		Hardware: "h100", Framework: "sglang", Model: "dsv41flash", Precision: "fp4", SpecMethod: "mtp",
		PrefillTP: 8, PrefillEP: 1, DecodeTP: 8, DecodeEP: 1, NumPrefillGPU: 8, NumDecodeGPU: 8,
	}, p.Config)
	require.Equal(t, 4, p.Conc)
	require.Equal(t, "semianalysisai/cc-traces-weka-062126", p.DatasetSlug)
	m := p.Metrics
	// Full-response ITL is preferred and interactivity re-derived from it.
	require.Equal(t, 0.00883, m["median_itl"])
	require.InDelta(t, 1/0.00883, m["median_intvty"], 1e-9)
	require.Equal(t, 1048.28613, m["std_intvty"])
	require.Equal(t, 405.2768, m["tput_per_gpu"])
	require.Equal(t, 0.36214, m["server_gpu_cache_hit_rate"])
	require.NotContains(t, m, "server_cpu_cache_hit_rate", "null is not a metric")
	require.Equal(t, 0.19, m["gpu_kv_cache_usage_pct"])
	require.Equal(t, 2601.363, m["p90_total_gpu_power_w"])
	require.Equal(t, "none", m["kv_offloading"])
	require.Empty(t, o.UnknownMetrics, "pp, kv_cache_pool_tokens and allocated_cpu_dram_gb are catalogued metrics")
}

func TestFixtureSingleNode(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "single_node_b200.json")
	requireOK(t, o)
	require.Equal(t, schema.Config{
		Hardware: "b200", Framework: "sglang", Model: "dsr1", Precision: "fp4", SpecMethod: "none",
		PrefillTP: 8, PrefillEP: 8, DecodeTP: 8, DecodeEP: 8, NumPrefillGPU: 8, NumDecodeGPU: 8,
	}, p.Config, "tp8/ep8 on one 8-GPU node is 8 GPUs (tp × pp × pcp), not tp × ep")
	require.Equal(t, "lmsysorg/sglang:v0.5.17-cu130", *p.Image)
	require.Equal(t, 8192, *p.ISL)
	require.Equal(t, 1024, *p.OSL)
	require.Equal(t, 64, p.Conc)
	require.Len(t, *p.RecipeFingerprint, 64)
	require.Equal(t, 119.43578535000657, p.Metrics["std_intvty"])
	require.Equal(t, 92.52239999999999, p.Metrics["p99.9_e2el"])
	require.Equal(t, 915.026, p.Metrics["avg_power_w"])
}

func TestFixtureMultinode(t *testing.T) {
	t.Parallel()
	p, o := normalizeOne(t, "multinode_gb200.json")
	requireOK(t, o)
	require.Equal(t, schema.Config{
		Hardware: "gb200", Framework: "dynamo-trt", Model: "dsr1", Precision: "fp4", SpecMethod: "mtp",
		Disagg: true, IsMultinode: true,
		PrefillTP: 4, PrefillEP: 4, PrefillDPAttention: true, PrefillNumWorkers: 1,
		DecodeTP: 8, DecodeEP: 8, DecodeDPAttention: true, DecodeNumWorkers: 1,
		NumPrefillGPU: 4, NumDecodeGPU: 8,
	}, p.Config)
	require.Equal(t, "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1", *p.Image)
	require.Equal(t, "dynamo-router", p.Metrics["router_name"])
	require.Equal(t, "0.8.1.post1", p.Metrics["router_version"])
	require.Equal(t, "nixl", p.Metrics["kv_p2p_transfer"])
	require.Equal(t, 0.0, p.Metrics["power_valid"])
	require.Empty(t, o.UnknownMetrics)
}
