package benchmark

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

type normalizeCase struct {
	name  string
	row   map[string]any
	check func(t *testing.T, p schema.BenchmarkPoint, o Outcome)
}

func runNormalizeCases(t *testing.T, cases []normalizeCase) {
	t.Helper()
	n := newTestNormalizer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, o := n.Normalize(tc.row)
			tc.check(t, p, o)
		})
	}
}

func requireOK(t *testing.T, o Outcome) {
	t.Helper()
	require.Equal(t, OK, o.Kind, "outcome %+v", o)
}

func requireFailed(reason string) func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
	return func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
		require.Equal(t, Failed, o.Kind, "outcome %+v", o)
		require.Equal(t, reason, o.Reason)
		require.Equal(t, schema.BenchmarkPoint{}, p)
	}
}

func requireSkipped(reason string) func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
	return func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
		require.Equal(t, Skipped, o.Kind, "outcome %+v", o)
		require.Equal(t, reason, o.SkipReason)
	}
}

func requireUnmapped(want ...UnmappedValue) func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
	return func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
		require.Equal(t, Unmapped, o.Kind, "outcome %+v", o)
		require.Equal(t, want, o.Unmapped)
	}
}

func gpus(t *testing.T, c schema.Config) [2]int {
	t.Helper()
	return [2]int{c.NumPrefillGPU, c.NumDecodeGPU}
}

func TestNormalizeV1(t *testing.T) {
	t.Parallel()
	runNormalizeCases(t, []normalizeCase{
		{"identity", build(t, v1Base), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, schema.Config{
				Hardware: "h200", Framework: "vllm", Model: "dsr1", Precision: "fp8", SpecMethod: "none",
				PrefillTP: 8, PrefillEP: 1, DecodeTP: 8, DecodeEP: 1, NumPrefillGPU: 8, NumDecodeGPU: 8,
			}, p.Config)
			require.Equal(t, schema.BenchmarkSingleTurn, p.BenchmarkType)
			require.Equal(t, 1024, *p.ISL)
			require.Equal(t, 1024, *p.OSL)
			require.Equal(t, 64, p.Conc)
			require.Nil(t, p.Image)
			require.Nil(t, p.RecipeFingerprint)
			require.Equal(t, OffloadOff, p.OffloadMode)
			require.Empty(t, o.UnknownMetrics)
		}},
		{"tp 4 ep 2 dp_attention True", build(t, v1Base, set("tp", "4"), set("ep", "2"), set("dp_attention", `"True"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				c := p.Config
				require.Equal(t, []int{4, 4, 2, 2, 0, 0}, []int{c.PrefillTP, c.DecodeTP, c.PrefillEP, c.DecodeEP, c.PrefillNumWorkers, c.DecodeNumWorkers})
				require.True(t, c.PrefillDPAttention)
				require.True(t, c.DecodeDPAttention)
				require.Equal(t, [2]int{4, 4}, gpus(t, c), "EP shares the TP devices: 4 GPUs, not tp × ep")
			}},
		{"tp and ep absent", build(t, v1Base, del("tp", "ep")), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, []int{1, 1, 1, 1}, []int{p.Config.PrefillTP, p.Config.PrefillEP, p.Config.NumPrefillGPU, p.Config.NumDecodeGPU})
		}},
		{"metrics", build(t, v1Base), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, map[string]any{"tput_per_gpu": 1234.5, "median_ttft": 50.2, "mean_tpot": 12.3}, p.Metrics)
		}},
		{"multinode and runtime metadata", build(t, v1Base, set("is_multinode", "true"), set("kv_p2p_transfer", `"nixl"`),
			set("router", `{"name":"sglang-router","version":"0.3.2"}`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.True(t, p.Config.IsMultinode)
				require.False(t, p.Config.Disagg)
				require.Equal(t, "nixl", p.Metrics["kv_p2p_transfer"])
				require.Equal(t, "sglang-router", p.Metrics["router_name"])
				require.Equal(t, "0.3.2", p.Metrics["router_version"])
			}},
		{"legacy router string", build(t, v1Base, set("router", `" vllm-router "`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, "vllm-router", p.Metrics["router_name"])
			require.NotContains(t, p.Metrics, "router_version")
		}},
		{"string identity ints", build(t, v1Base, set("isl", `"2048"`), set("osl", `"4096"`), set("conc", `"32"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, []int{2048, 4096, 32}, []int{*p.ISL, *p.OSL, p.Conc})
			}},
		{"disagg True", build(t, v1Base, set("disagg", `"True"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.True(t, p.Config.Disagg)
		}},
		{"spec mtp", build(t, v1Base, set("spec_decoding", `"mtp"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Equal(t, "mtp", p.Config.SpecMethod)
		}},
		{"spec Eagle", build(t, v1Base, set("spec_decoding", `"Eagle"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Equal(t, "eagle", p.Config.SpecMethod)
		}},
		{"spec null", build(t, v1Base, set("spec_decoding", `null`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Equal(t, "none", p.Config.SpecMethod)
		}},
		{"precision FP8", build(t, v1Base, set("precision", `"FP8"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Equal(t, "fp8", p.Config.Precision)
		}},
		{"precision nvfp4", build(t, v1Base, set("precision", `"NVFP4"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Equal(t, "fp4", p.Config.Precision)
		}},
		{"is_multinode True string", build(t, v1Base, set("is_multinode", `"True"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.True(t, p.Config.IsMultinode)
		}},
		{"image with #", build(t, v1Base, set("image", `"registry.io#org#repo:v1.2.3-rc1+build.123"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, "registry.io/org/repo:v1.2.3-rc1+build.123", *p.Image)
			}},
		{"image nvcr", build(t, v1Base, set("image", `"nvcr.io#nvidia#tritonserver:24.07"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, "nvcr.io/nvidia/tritonserver:24.07", *p.Image)
			}},
		{"recipe fingerprint", build(t, v1Base, set("recipe_fingerprint", `"`+strings.Repeat("a", 64)+`"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, strings.Repeat("a", 64), *p.RecipeFingerprint)
				require.NotContains(t, p.Metrics, "recipe_fingerprint")
			}},
		{"recipe-fingerprint spelling", build(t, v1Base, set("recipe-fingerprint", `"abc"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, "abc", *p.RecipeFingerprint)
			}},
		{"empty recipe fingerprint", build(t, v1Base, set("recipe_fingerprint", `"  "`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Nil(t, p.RecipeFingerprint)
			}},
	})
}

func TestNormalizeV2(t *testing.T) {
	t.Parallel()
	runNormalizeCases(t, []normalizeCase{
		{"role-shaped", build(t, v2Base), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			c := p.Config
			require.Equal(t, []any{4, 2, false, 1}, []any{c.PrefillTP, c.PrefillEP, c.PrefillDPAttention, c.PrefillNumWorkers})
			require.Equal(t, []any{2, 4, true, 2}, []any{c.DecodeTP, c.DecodeEP, c.DecodeDPAttention, c.DecodeNumWorkers})
			require.Equal(t, [2]int{8, 8}, gpus(t, c))
			require.True(t, c.Disagg, "decode workers imply disaggregation")
		}},
		// The reference's rule: a missing count is tp × ep per worker, times the workers. The
		// older reference test expected 8 for decode (2 × 4, workers
		// ignored); the newest topology resolver multiplies by the 2 workers.
		{"counts without num_*_gpu", build(t, v2Base, del("num_prefill_gpu", "num_decode_gpu")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				// physical tp × pp × pcp per engine, times workers: 4×1 and 2×2
				require.Equal(t, [2]int{4, 4}, gpus(t, p.Config))
			}},
		{"without workers", build(t, v2Base, del("prefill_num_workers", "decode_num_workers")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 0, p.Config.PrefillNumWorkers)
				require.Equal(t, 0, p.Config.DecodeNumWorkers)
				require.False(t, p.Config.Disagg)
			}},
		{"sglang-disagg", build(t, v1Base, set("framework", `"sglang-disagg"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, "mori-sglang", p.Config.Framework)
			require.True(t, p.Config.Disagg)
		}},
		{"dynamo-trtllm without disagg field", build(t, v1Base, set("framework", `"dynamo-trtllm"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, "dynamo-trt", p.Config.Framework)
				require.True(t, p.Config.Disagg)
			}},
		{"multinode dynamo aggregate collapses to prefill", build(t, v1Base, del("tp", "ep", "dp_attention"),
			set("framework", `"dynamo-trt"`), set("disagg", "false"), set("is_multinode", "true"),
			set("prefill_tp", "8"), set("prefill_ep", "1"), set("prefill_num_workers", "1"), set("num_prefill_gpu", "16"),
			set("decode_tp", "0"), set("decode_ep", "0"), set("decode_num_workers", "0"), set("num_decode_gpu", "0"),
			set("prefill_pp", "2"), set("decode_pp", "1")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				c := p.Config
				require.False(t, c.Disagg)
				require.True(t, c.IsMultinode)
				require.Equal(t, []int{8, 8, 1, 1, 16, 16}, []int{c.PrefillTP, c.DecodeTP, c.PrefillEP, c.DecodeEP, c.NumPrefillGPU, c.NumDecodeGPU})
				require.Equal(t, 2.0, p.Metrics["prefill_pp"])
				require.Equal(t, 2.0, p.Metrics["decode_pp"])
			}},
		{"dynamo-vllm with workers 1/1 is disaggregated", build(t, v2Base, set("framework", `"dynamo-vllm"`), set("disagg", "false"),
			set("decode_num_workers", "1")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.True(t, p.Config.Disagg)
			}},
		{"mirrored sglang aggregate is flat", build(t, v1Base, set("framework", `"sglang"`), set("is_multinode", "false"),
			set("tp", "4"), set("ep", "1"), set("prefill_tp", "4"), set("decode_tp", "4"),
			set("prefill_num_workers", "1"), set("decode_num_workers", "1")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				c := p.Config
				require.False(t, c.Disagg)
				require.Equal(t, []int{4, 4, 0, 0, 4, 4}, []int{c.PrefillTP, c.DecodeTP, c.PrefillNumWorkers, c.DecodeNumWorkers, c.NumPrefillGPU, c.NumDecodeGPU})
			}},
		{"pp equalised only when aggregate", build(t, v2Base, set("prefill_pp", "1"), set("decode_pp", "3")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.True(t, p.Config.Disagg)
				require.Equal(t, 1.0, p.Metrics["prefill_pp"])
				require.Equal(t, 3.0, p.Metrics["decode_pp"])
			}},
	})
}

func TestNormalizeSkipsAndFailures(t *testing.T) {
	t.Parallel()
	unmapped := func(kind, value string) UnmappedValue { return UnmappedValue{Kind: kind, Value: value} }
	runNormalizeCases(t, []normalizeCase{
		{"unmapped model", build(t, v1Base, set("infmax_model_prefix", `"nonexistent_model_xyz"`), del("model")),
			requireUnmapped(unmapped(DimModel, "nonexistent_model_xyz"))},
		{"unmapped hardware", build(t, v1Base, set("hw", `"imaginary-gpu-999"`)),
			requireUnmapped(unmapped(DimHardware, "imaginary-gpu-999"))},
		{"every unmapped dimension", build(t, v1Base, set("infmax_model_prefix", `"nope"`), set("model", `"org/Nope"`),
			set("hw", `"a100-nv"`), set("framework", `"vllm-disagg"`), set("precision", `"fp6"`), set("spec_decoding", `"dspark"`)),
			requireUnmapped(unmapped(DimModel, "nope"), unmapped(DimHardware, "a100-nv"), unmapped(DimFramework, "vllm-disagg"),
				unmapped(DimPrecision, "fp6"), unmapped(DimSpecMethod, "dspark"))},
		{"model id when prefix is absent", build(t, v1Base, del("infmax_model_prefix"), set("model", `"org/Unknown"`)),
			requireUnmapped(unmapped(DimModel, "org/Unknown"))},
		{"empty framework", build(t, v1Base, set("framework", `""`)), requireUnmapped(unmapped(DimFramework, ""))},
		{"precision absent", build(t, v1Base, del("precision")), requireUnmapped(unmapped(DimPrecision, ""))},
		{"no isl/osl", build(t, v1Base, del("isl", "osl")), requireSkipped(SkipMissingIdentity)},
		{"isl null", build(t, v1Base, set("isl", "null")), requireSkipped(SkipMissingIdentity)},
		{"no conc", build(t, v1Base, del("conc")), requireFailed("conc: missing")},
		{"conc 0", build(t, v1Base, set("conc", "0")), requireFailed("conc: 0 is not a positive integer")},
		{"conc -4", build(t, v1Base, set("conc", "-4")), requireFailed("conc: -4 is not a positive integer")},
		{"conc abc", build(t, v1Base, set("conc", `"abc"`)), requireFailed(`conc: "abc" is not a positive integer`)},
		{"conc 2.5", build(t, v1Base, set("conc", "2.5")), requireFailed("conc: 2.5 is not a positive integer")},
		{"conc bool", build(t, v1Base, set("conc", "true")), requireFailed("conc: true is not a positive integer")},
		{"conc huge", build(t, v1Base, set("conc", "1e12")), requireFailed("conc: 1e+12 is out of range")},
		{"isl garbage", build(t, v1Base, set("isl", `"8k"`)), requireFailed(`isl: "8k" is not a positive integer`)},
		{"osl zero", build(t, v1Base, set("osl", "0")), requireFailed("osl: 0 is not a positive integer")},
		{"invalid isl beats missing osl", build(t, v1Base, set("isl", "-1"), del("osl")), requireFailed("isl: -1 is not a positive integer")},
		{"agentic users missing falls back to conc", build(t, agenticBase, del("users"), set("conc", "8")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 8, p.Conc)
			}},
		{"agentic without users or conc", build(t, agenticBase, del("users")), requireFailed("conc: missing")},
		{"agentic users invalid", build(t, agenticBase, set("users", `"x"`)), requireFailed(`users: "x" is not a positive integer`)},
		{"benchmark_outcome failed", build(t, v1Base, set("benchmark_outcome", `{"status":"failed","requested":100,"completed":3}`)),
			requireSkipped(SkipFailedRun)},
		{"failed outcome beats invalid identity", build(t, v1Base, del("conc"), set("benchmark_outcome", `{"status":"failed"}`)),
			requireSkipped(SkipFailedRun)},
		{"zero successful of 100", build(t, v1Base, set("num_requests_successful", "0"), set("num_requests_total", "100")),
			requireSkipped(SkipFailedRun)},
		{"zero successful of 0", build(t, v1Base, set("num_requests_successful", "0"), set("num_requests_total", "0")),
			requireSkipped(SkipFailedRun)},
		{"zero successful without a total is not a failed run", build(t, v1Base, set("num_requests_successful", "0")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) { requireOK(t, o) }},
		{"failed-run guard runs before resolution", build(t, v1Base, set("hw", `"a100"`),
			set("num_requests_successful", "0"), set("num_requests_total", "4")),
			requireSkipped(SkipFailedRun)},
		{"tp out of smallint range", build(t, v1Base, set("tp", "40000")), requireFailed("tp: 40000 is out of range 0..32767")},
		{"tp zero", build(t, v1Base, set("tp", "0")), requireFailed("prefill_tp: 0 is out of range 1..32767")},
		{"tp garbage", build(t, v1Base, set("tp", `"eight"`)), requireFailed(`tp: "eight" is not a non-negative integer`)},
		{"negative workers", build(t, v2Base, set("decode_num_workers", "-1")),
			requireFailed("decode_num_workers: -1 is not a non-negative integer")},
		{"gpu count product out of range", build(t, v2Base, del("num_prefill_gpu"), set("prefill_tp", "300"), set("prefill_pp", "300")),
			requireFailed("num_prefill_gpu: 90000 is out of range 0..32767")},
	})
}

func TestNormalizeMetricCapture(t *testing.T) {
	t.Parallel()
	runNormalizeCases(t, []normalizeCase{
		// A known metric holding text is never dropped silently (issue 12):
		// the row fails naming the metric and the value.
		{"not a number string", build(t, v1Base, set("tput_per_gpu", `"not_a_number"`)),
			requireFailed(`metric tput_per_gpu: "not_a_number" is not a number`)},
		{"42abc is not a metric", build(t, v1Base, set("p99_ttft", `"42abc"`)),
			requireFailed(`metric p99_ttft: "42abc" is not a number`)},
		{"unknown key holding text is not a metric", build(t, v1Base, set("mystery_note", `"42abc"`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.NotContains(t, p.Metrics, "mystery_note")
		}},
		{"numeric strings are metrics", build(t, v1Base, set("p99_ttft", `" 4.5 "`)), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, 4.5, p.Metrics["p99_ttft"])
		}},
		{"booleans, null and empty strings are not metrics", build(t, v1Base,
			set("p90_ttft", "true"), set("mean_ttft", "null"),
			set("std_ttft", `""`), set("extra_flag", "false"), set("extra_list", "[3]"), set("extra_note", `"fast"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				for _, k := range []string{"p90_ttft", "mean_ttft", "std_ttft", "extra_flag", "extra_list", "extra_note"} {
					require.NotContains(t, p.Metrics, k)
				}
				require.Empty(t, o.UnknownMetrics)
			}},
		{"known metric holding text fails the row", build(t, v1Base, set("tput_per_gpu", `"fast"`)),
			requireFailed(`metric tput_per_gpu: "fast" is not a number`)},
		{"known metric holding an array fails the row", build(t, v1Base, set("p99_ttft", "[3]")),
			requireFailed("metric p99_ttft: [3] is not a number")},
		{"known metric holding an object fails the row", build(t, v1Base, set("p95_ttft", `{"v":1}`)),
			requireFailed(`metric p95_ttft: {"v":1} is not a number`)},
		{"non-finite known metric fails the row", build(t, v1Base, set("p99_ttft", `"NaN"`)),
			requireFailed("metric p99_ttft: non-finite value")},
		{"infinite known metric fails the row", build(t, v1Base, set("p99_ttft", `"-inf"`)),
			requireFailed("metric p99_ttft: non-finite value")},
		{"overflowing numeric string fails the row", build(t, v1Base, set("tput_per_gpu", `"1e400"`)),
			requireFailed("metric tput_per_gpu: non-finite value")},
		{"non-finite unknown metric is dropped", build(t, v1Base, set("mystery_ms", `"Infinity"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.NotContains(t, p.Metrics, "mystery_ms")
				require.Empty(t, o.UnknownMetrics)
			}},
		{"unknown metrics are kept and listed", build(t, v1Base, set("pp", "1"), set("request_goodput:", "12.5"), set("zeta", `"3"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 12.5, p.Metrics["request_goodput:"])
				require.Equal(t, 3.0, p.Metrics["zeta"])
				require.Equal(t, 1.0, p.Metrics["pp"])
				require.Equal(t, []string{"request_goodput:", "zeta"}, o.UnknownMetrics, "pp is a catalogued metric")
			}},
		{"non-metric keys never become metrics", build(t, v1Base, set("num_gpus", "8"), set("users", "3"),
			set("num_requests_total", "10"), set("num_requests_successful", "10"), set("result_schema_version", "1")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				for _, k := range []string{"hw", "model", "framework", "isl", "osl", "conc", "tp", "ep", "num_gpus", "users",
					"num_requests_total", "num_requests_successful", "result_schema_version"} {
					require.NotContains(t, p.Metrics, k)
				}
			}},
	})
}

func TestNormalizePower(t *testing.T) {
	t.Parallel()
	measured := []mod{set("power_metric_schema_version", "2"), set("avg_power_w", "500"), set("total_gpu_energy_j", "1000"),
		set("joules_per_output_token", "2"), set("p90_power_w", "510"), set("avg_temp_c", "68.4")}
	workers := set("workers", `[{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500}]`)
	withPower := func(valid string, extra ...mod) map[string]any {
		mods := append([]mod{set("power_valid", valid), workers}, measured...)
		return build(t, v1Base, append(mods, extra...)...)
	}
	scrubbed := func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
		requireOK(t, o)
		require.Equal(t, 0.0, p.Metrics["power_valid"])
		require.Equal(t, 2.0, p.Metrics["power_metric_schema_version"])
		require.Equal(t, 1234.5, p.Metrics["tput_per_gpu"])
		for _, k := range []string{"avg_power_w", "total_gpu_energy_j", "joules_per_output_token", "p90_power_w", "avg_temp_c"} {
			require.NotContains(t, p.Metrics, k)
		}
		require.Nil(t, p.Workers)
	}
	runNormalizeCases(t, []normalizeCase{
		{"power_valid 0 withholds measured keys and workers", withPower("0"), scrubbed},
		{"power_valid 2 is normalised to 0", withPower("2"), scrubbed},
		{"power_valid true is not 1", withPower("true"), scrubbed},
		{"power_valid 0 withholds a non-finite measured key", withPower("0", set("avg_total_gpu_power_w", `"NaN"`)), scrubbed},
		{"power_valid 1 keeps everything", withPower(`"1"`), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, 1.0, p.Metrics["power_valid"])
			require.Equal(t, 500.0, p.Metrics["avg_power_w"])
			require.Equal(t, 68.4, p.Metrics["avg_temp_c"])
			require.NotNil(t, p.Workers)
			require.Empty(t, o.UnknownMetrics)
		}},
		{"no verdict keeps measured keys", build(t, v1Base, measured...), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.NotContains(t, p.Metrics, "power_valid")
			require.Equal(t, 500.0, p.Metrics["avg_power_w"])
		}},
		{"power_valid 1 with a non-finite measured key fails", withPower("1", set("avg_total_gpu_power_w", `"inf"`)),
			requireFailed("metric avg_total_gpu_power_w: non-finite value")},
		{"power_valid 0 withholds a measured key holding text", withPower("0", set("avg_power_w", `"n/a"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.NotContains(t, p.Metrics, "avg_power_w")
			}},
		{"power_valid 1 with a measured key holding text fails", withPower("1", set("avg_power_w", `"n/a"`)),
			requireFailed(`metric avg_power_w: "n/a" is not a number`)},
		{"schema version must be a positive integer", withPower("1", set("power_metric_schema_version", `"02"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.NotContains(t, p.Metrics, "power_metric_schema_version")
			}},
		{"schema version canonical string", withPower("1", set("power_metric_schema_version", `"2"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, 2.0, p.Metrics["power_metric_schema_version"])
			}},
		{"cpu keys kept without cpu_power_valid", withPower("1", set("avg_total_cpu_power_w", "300"), set("total_cpu_energy_j", "9000")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 300.0, p.Metrics["avg_total_cpu_power_w"])
				require.Equal(t, 9000.0, p.Metrics["total_cpu_energy_j"])
				require.NotContains(t, p.Metrics, "cpu_power_valid")
			}},
		{"cpu keys kept with cpu_power_valid 1", withPower("1", set("cpu_power_valid", "1"), set("avg_total_cpu_power_w", "300")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 1.0, p.Metrics["cpu_power_valid"])
				require.Equal(t, 300.0, p.Metrics["avg_total_cpu_power_w"])
			}},
		{"workers preserved", build(t, v2Base, set("workers", `[
			{"role":"prefill","worker_idx":0,"hosts":["pn0"],"num_gpus":4,"avg_power_w":612.3,"avg_temp_c":71.2,"peak_temp_c":78,"avg_util_pct":92.1,"avg_mem_used_mb":65432},
			{"role":"decode","worker_idx":0,"hosts":["dn0","dn1","dn2","dn3"],"num_gpus":16,"avg_power_w":712.1}]`),
			set("avg_temp_c", "68.4"), set("peak_temp_c", "79.2"), set("avg_util_pct", "88.5"), set("avg_mem_used_mb", "71234.5")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.JSONEq(t, `[
					{"role":"prefill","worker_idx":0,"hosts":["pn0"],"num_gpus":4,"avg_power_w":612.3,"avg_temp_c":71.2,"peak_temp_c":78,"avg_util_pct":92.1,"avg_mem_used_mb":65432},
					{"role":"decode","worker_idx":0,"hosts":["dn0","dn1","dn2","dn3"],"num_gpus":16,"avg_power_w":712.1}]`, string(p.Workers))
				require.NotContains(t, p.Metrics, "workers")
				require.Equal(t, 68.4, p.Metrics["avg_temp_c"])
				require.Equal(t, 79.2, p.Metrics["peak_temp_c"])
				require.Equal(t, 88.5, p.Metrics["avg_util_pct"])
				require.Equal(t, 71234.5, p.Metrics["avg_mem_used_mb"])
			}},
		{"workers absent", build(t, v1Base), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.Nil(t, p.Workers)
			require.Nil(t, p.PowerInvalidReasons)
			require.Nil(t, p.PowerAudit)
		}},
	})
}

func TestNormalizeAgentic(t *testing.T) {
	t.Parallel()
	withFullResponse := func(t testing.TB, row map[string]any) {
		lat := row["request_metrics"].(map[string]any)["latency"].(map[string]any)
		lat["full_response_itl"] = decodeJSON(t, `{"mean":0.005,"p50":0.004,"p75":0.006,"std":0.001}`)
		lat["full_response_intvty"] = decodeJSON(t, `{"mean":200,"p50":250,"p75":166.66667,"std":20}`)
	}
	runNormalizeCases(t, []normalizeCase{
		{"flat agentic row", build(t, agenticBase), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, schema.BenchmarkAgenticTraces, p.BenchmarkType)
			require.Nil(t, p.ISL)
			require.Nil(t, p.OSL)
			require.Equal(t, 72, p.Conc)
			require.Equal(t, "dsv4", p.Config.Model)
			require.Equal(t, "b200", p.Config.Hardware)
			require.Equal(t, "off", p.Metrics["offload_mode"])
		}},
		{"intvty derived from itl", build(t, agenticBase, set("p90_itl", "0.0893"), set("p90_intvty", "23.91"),
			set("p75_itl", "0.0692"), set("p75_intvty", "19")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.InDelta(t, 1/0.0893, p.Metrics["p90_intvty"], 1e-9)
				require.InDelta(t, 1/0.0692, p.Metrics["p75_intvty"], 1e-9)
			}},
		{"intvty derived when absent", build(t, agenticBase, set("p90_itl", "0.1")), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			require.InDelta(t, 10, p.Metrics["p90_intvty"], 1e-9)
		}},
		{"single-turn intvty untouched", build(t, v1Base, set("p90_itl", "0.05"), set("p90_intvty", "999")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, 999.0, p.Metrics["p90_intvty"])
			}},
		{"stale intvty without itl deleted", build(t, agenticBase, set("p90_intvty", "42"), set("p95_itl", "0.2")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.NotContains(t, p.Metrics, "p90_intvty")
				require.InDelta(t, 5, p.Metrics["p95_intvty"], 1e-9)
			}},
		{"intvty with zero itl deleted", build(t, agenticBase, set("p90_itl", "0"), set("p90_intvty", "42")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.NotContains(t, p.Metrics, "p90_intvty")
			}},
		{"v3 nested row", build(t, v3Base), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, schema.BenchmarkAgenticTraces, p.BenchmarkType)
			require.Equal(t, "b300", p.Config.Hardware)
			require.Equal(t, 16, p.Conc)
			require.Nil(t, p.ISL)
			require.Nil(t, p.OSL)
			require.Equal(t, [2]int{4, 4}, gpus(t, p.Config), "v3 aggregate counts physical tp×pp×pcp")
			m := p.Metrics
			want := map[string]float64{
				"median_ttft": 1.49712, "p90_ttft": 56.22194, "std_e2el": 149.59205, "p95_itl": 0.22255,
				"mean_tpot": 0.07548, "median_qps": 0, "p90_input_tokens": 404935.9,
				"median_output_tokens_actual": 290.5, "p95_output_tokens_expected": 5312.9,
				"tput_per_gpu": 9043.47223, "output_tput_per_gpu": 48.43723, "input_tput_per_gpu": 8995.035,
				"total_tput_tps": 36173.88892, "duration_seconds": 7222.04352, "theoretical_cache_hit_rate": 0.97509,
				"server_gpu_cache_hit_rate": 0.78539, "server_external_cache_hit_rate": 0, "gpu_kv_cache_usage_pct": 0.82134,
				"total_prompt_tokens": 261750519, "total_generation_tokens": 1422696, "total_requests_completed": 1648,
				"std_intvty": 24.77636,
			}
			for k, v := range want {
				require.Contains(t, m, k)
				require.InDelta(t, v, m[k], 1e-9, k)
			}
			require.InDelta(t, 1/0.03677, m["median_intvty"], 1e-9)
			require.InDelta(t, 27.19411, m["median_intvty"], 1e-2)
			require.InDelta(t, 1/0.16652, m["p90_intvty"], 1e-9)
			require.NotContains(t, m, "request_metrics")
			require.NotContains(t, m, "server_metrics")
			require.NotContains(t, m, "samples_qps")
			require.Equal(t, "off", p.OffloadMode)
			require.NotContains(t, m, "kv_offload_backend")
			require.Equal(t, "none", m["kv_offloading"])
			require.Equal(t, "semianalysisai/cc-traces-weka-062126", p.DatasetSlug)
			require.Empty(t, o.UnknownMetrics)
		}},
		{"v3 full-response preference", build(t, v3Base, withFullResponse), func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			m := p.Metrics
			require.Equal(t, 0.004, m["median_itl"])
			require.InDelta(t, 1/0.006, m["p75_intvty"], 1e-9)
			require.Equal(t, 0.001, m["std_itl"])
			require.Equal(t, 20.0, m["std_intvty"])
			require.NotContains(t, m, "p99_itl")
			require.NotContains(t, m, "p99_intvty")
			require.NotContains(t, m, "p90_itl", "no full-response p90: the legacy value must not be mixed in")
			require.NotContains(t, m, "p90_intvty")
		}},
		{"v3 dram offload with backend", build(t, v3Base, set("kv_offloading", `"dram"`), set("kv_offload_backend", `"mooncake"`), set("conc", "32")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, "on", p.OffloadMode)
				require.Equal(t, "on", p.Metrics["offload_mode"])
				require.Equal(t, "dram", p.Metrics["kv_offloading"])
				require.Equal(t, "mooncake", p.Metrics["kv_offload_backend"])
			}},
		{"v3 backend object", build(t, v3Base, set("kv_offloading", `"dram"`), set("kv_offload_backend", `{"name":"lmcache","version":"0.5.1"}`),
			set("router", `{"name":"vllm-router","version":"0.1.14"}`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, "lmcache", p.Metrics["kv_offload_backend"])
				require.Equal(t, "0.5.1", p.Metrics["kv_offload_backend_version"])
				require.Equal(t, "vllm-router", p.Metrics["router_name"])
				require.Equal(t, "0.1.14", p.Metrics["router_version"])
			}},
		{"v3 zero successful of 100", build(t, v3Base, set("num_requests_successful", "0"), set("num_requests_total", "100")),
			requireSkipped(SkipFailedRun)},
		{"v3 zero successful of 0", build(t, v3Base, set("num_requests_successful", "0"), set("num_requests_total", "0")),
			requireSkipped(SkipFailedRun)},
		{"v3 nested non-finite known metric fails", build(t, v3Base, func(t testing.TB, row map[string]any) {
			row["request_metrics"].(map[string]any)["latency"].(map[string]any)["ttft"].(map[string]any)["p95"] = "NaN"
		}), requireFailed("metric p95_ttft: non-finite value")},
		{"flat v2 agentic row with offload_mode on", build(t, agenticBase, set("p90_itl", "0.1"), set("mean_ttft", "1.5"), set("offload_mode", `"on"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, "on", p.OffloadMode)
				require.Equal(t, 1.5, p.Metrics["mean_ttft"])
				require.InDelta(t, 10, p.Metrics["p90_intvty"], 1e-9)
			}},
		{"sglang agentic shares EP devices", build(t, agenticBase, set("framework", `"sglang"`), set("is_multinode", "false"),
			set("tp", "4"), set("ep", "4"), set("pp", "2")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, [2]int{8, 8}, gpus(t, p.Config), "tp × pp, EP shares the TP devices")
			}},
		{"num_gpus wins over parallelism", build(t, agenticBase, set("tp", "4"), set("ep", "4"), set("num_gpus", "4")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				require.Equal(t, [2]int{4, 4}, gpus(t, p.Config))
			}},
	})
}

func TestNormalizeDoesNotModifyRow(t *testing.T) {
	t.Parallel()
	n := newTestNormalizer(t)
	row := build(t, v3Base, set("power_valid", "0"), set("avg_power_w", "3"))
	before := build(t, v3Base, set("power_valid", "0"), set("avg_power_w", "3"))
	_, o := n.Normalize(row)
	requireOK(t, o)
	require.Equal(t, before, row)
}

// Identity integers: an integral number or a plain decimal string is the
// same point ("16" → 16); anything else fails the row, quoting the value,
// never read as a nearby number (issue 12 decision 2).
func TestNormalizeIdentityIntegers(t *testing.T) {
	t.Parallel()
	conc := func(want int) func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
		return func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
			requireOK(t, o)
			require.Equal(t, want, p.Conc)
		}
	}
	runNormalizeCases(t, []normalizeCase{
		{"conc number", build(t, v1Base, set("conc", "16")), conc(16)},
		{"conc decimal string", build(t, v1Base, set("conc", `"16"`)), conc(16)},
		{"conc with a leading space", build(t, v1Base, set("conc", `" 16"`)), requireFailed(`conc: " 16" is not a positive integer`)},
		{"conc with a trailing newline", build(t, v1Base, set("conc", `"16\n"`)), requireFailed(`conc: "16\n" is not a positive integer`)},
		{"conc 16.0 string", build(t, v1Base, set("conc", `"16.0"`)), requireFailed(`conc: "16.0" is not a positive integer`)},
		{"conc hex string", build(t, v1Base, set("conc", `"0x10"`)), requireFailed(`conc: "0x10" is not a positive integer`)},
		{"conc leading zero", build(t, v1Base, set("conc", `"016"`)), requireFailed(`conc: "016" is not a positive integer`)},
		{"conc plus sign", build(t, v1Base, set("conc", `"+16"`)), requireFailed(`conc: "+16" is not a positive integer`)},
		{"conc empty string", build(t, v1Base, set("conc", `""`)), requireFailed(`conc: "" is not a positive integer`)},
		{"conc 16.5", build(t, v1Base, set("conc", "16.5")), requireFailed(`conc: 16.5 is not a positive integer`)},
		{"conc -1", build(t, v1Base, set("conc", "-1")), requireFailed(`conc: -1 is not a positive integer`)},
		{"conc \"0\"", build(t, v1Base, set("conc", `"0"`)), requireFailed(`conc: "0" is not a positive integer`)},
		{"isl decimal string", build(t, v1Base, set("isl", `"8192"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 8192, *p.ISL)
			}},
		{"isl 8192.0 string", build(t, v1Base, set("isl", `"8192.0"`)), requireFailed(`isl: "8192.0" is not a positive integer`)},
		{"osl exponent string", build(t, v1Base, set("osl", `"1e3"`)), requireFailed(`osl: "1e3" is not a positive integer`)},
		{"tp decimal string", build(t, v1Base, set("tp", `"8"`)),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 8, p.Config.DecodeTP)
			}},
		{"tp with a space", build(t, v1Base, set("tp", `"8 "`)), requireFailed(`tp: "8 " is not a non-negative integer`)},
		{"ep 1.5", build(t, v1Base, set("ep", "1.5")), requireFailed(`ep: 1.5 is not a non-negative integer`)},
		{"agentic users string", build(t, agenticBase, set("users", `"32"`)), conc(32)},
		{"agentic users 32.0 string", build(t, agenticBase, set("users", `"32.0"`)), requireFailed(`users: "32.0" is not a positive integer`)},
	})
}

// The derived_ prefix names what the ingest derives from traces: a row
// publishing such a key fails, whatever its value (issue 12 decision 4).
func TestNormalizeReservedDerivedPrefix(t *testing.T) {
	t.Parallel()
	runNormalizeCases(t, []normalizeCase{
		{"single-turn metric", build(t, v1Base, set("derived_gpu_cache_hit_rate", "0.5")),
			requireFailed("derived_gpu_cache_hit_rate: the derived_ prefix is reserved for metrics the ingest derives from traces")},
		{"agentic metric", build(t, agenticBase, set("derived_median_full_response_itl", "0.01")),
			requireFailed("derived_median_full_response_itl: the derived_ prefix is reserved for metrics the ingest derives from traces")},
		{"non-numeric value", build(t, v1Base, set("derived_note", `"x"`)),
			requireFailed("derived_note: the derived_ prefix is reserved for metrics the ingest derives from traces")},
		{"first of several, sorted", build(t, v1Base, set("derived_z", "1"), set("derived_a", "1")),
			requireFailed("derived_a: the derived_ prefix is reserved for metrics the ingest derives from traces")},
		{"the prefix inside a name is fine", build(t, v1Base, set("not_derived_x", "1")),
			func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				require.Equal(t, 1.0, p.Metrics["not_derived_x"])
			}},
	})
}

// TestNormalizerReleasedMaps: a metrics map given back is taken by a later
// point cleared — nothing of the earlier point's metrics survives in it —
// and the released point no longer holds it.
func TestNormalizerReleasedMaps(t *testing.T) {
	t.Parallel()
	n := newTestNormalizer(t)
	first, o := n.Normalize(build(t, v1Base, set("p99_ttft", "1.5"), set("extra_metric_a", "7")))
	requireOK(t, o)
	require.Contains(t, first.Metrics, "extra_metric_a")
	want, o := n.Normalize(build(t, v1Base, set("p99_ttft", "2.5")))
	requireOK(t, o)
	reused := 0
	for range 20 { // the pool may drop what it is given; try a few times
		released := reflect.ValueOf(first.Metrics).Pointer()
		n.Release(&first)
		require.Nil(t, first.Metrics)
		p, o := n.Normalize(build(t, v1Base, set("p99_ttft", "2.5")))
		requireOK(t, o)
		require.Equal(t, want.Metrics, p.Metrics)
		require.NotContains(t, p.Metrics, "extra_metric_a")
		if reflect.ValueOf(p.Metrics).Pointer() == released {
			reused++
		}
		first = p
	}
	require.Positive(t, reused, "no released map was taken by a later point")
	n.Release(&schema.BenchmarkPoint{}) // a point without metrics: nothing to give back
}

// TestNormalizeNegativeQuantities: a latency, throughput, power or energy
// below zero is no measurement; the row fails naming the metric (a
// negative latency would sit on the Pareto frontier). Temperatures are
// Celsius and may be negative; zero is a value.
func TestNormalizeNegativeQuantities(t *testing.T) {
	t.Parallel()
	var cases []normalizeCase
	for _, tc := range []struct{ key, value, reason string }{
		{"mean_ttft", "-1e308", "metric mean_ttft: negative value -1e+308"},
		{"avg_power_w", "-5e300", "metric avg_power_w: negative value -5e+300"},
		{"tput_per_gpu", "-0.5", "metric tput_per_gpu: negative value -0.5"},
		{"p99_e2el", `"-3"`, "metric p99_e2el: negative value -3"},
		{"total_gpu_energy_j", "-1", "metric total_gpu_energy_j: negative value -1"},
		{"joules_per_output_token", "-2", "metric joules_per_output_token: negative value -2"},
		{"median_intvty", "-7", "metric median_intvty: negative value -7"},
		{"duration_seconds", "-60", "metric duration_seconds: negative value -60"},
		{"mean_ttft", "0", ""},
		{"avg_temp_c", "-5", ""},
	} {
		check := requireFailed(tc.reason)
		if tc.reason == "" {
			check = func(t *testing.T, p schema.BenchmarkPoint, o Outcome) { requireOK(t, o) }
		}
		cases = append(cases, normalizeCase{tc.key + " " + tc.value, build(t, v1Base, set(tc.key, tc.value)), check})
	}
	runNormalizeCases(t, cases)
}

// TestNormalizeWorkerQuantities: the per-worker power breakdown follows
// the row's rule for its quantities. A worker's power, utilisation or
// memory that is negative or not finite is no measurement and fails the
// row naming the entry and key; a temperature (Celsius) may be below zero;
// zero is a value.
func TestNormalizeWorkerQuantities(t *testing.T) {
	t.Parallel()
	entry := func(extra string) string {
		return `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":600` + extra + `}`
	}
	good := `{"role":"prefill","worker_idx":0,"num_gpus":4,"avg_power_w":500}`
	var cases []normalizeCase
	for _, tc := range []struct{ name, second, reason string }{
		{"negative power", `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":-5e300}`, "workers[1].avg_power_w: negative value -5e+300"},
		{"negative power as text", `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":"-1"}`, "workers[1].avg_power_w: negative value -1"},
		{"non-finite power", `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":"NaN"}`, "workers[1].avg_power_w: non-finite value"},
		{"infinite power", `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":"-Infinity"}`, "workers[1].avg_power_w: non-finite value"},
		{"negative utilisation", entry(`,"avg_util_pct":-3`), "workers[1].avg_util_pct: negative value -3"},
		{"non-finite memory", entry(`,"avg_mem_used_mb":"Inf"`), "workers[1].avg_mem_used_mb: non-finite value"},
		{"non-finite temperature", entry(`,"peak_temp_c":"NaN"`), "workers[1].peak_temp_c: non-finite value"},
		{"negative temperature", entry(`,"avg_temp_c":-5`), ""},
		{"zero power", `{"role":"decode","worker_idx":1,"num_gpus":8,"avg_power_w":0}`, ""},
	} {
		row := build(t, v1Base, set("power_valid", "1"), set("workers", "["+good+","+tc.second+"]"))
		check := requireFailed(tc.reason)
		if tc.reason == "" {
			check = func(t *testing.T, p schema.BenchmarkPoint, o Outcome) {
				requireOK(t, o)
				var ws []map[string]any
				require.NoError(t, json.Unmarshal(p.Workers, &ws))
				require.Len(t, ws, 2, "both entries kept")
			}
		}
		cases = append(cases, normalizeCase{tc.name, row, check})
	}
	runNormalizeCases(t, cases)
}
