package benchmark

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/catalog"
)

func newTestNormalizer(t testing.TB) *Normalizer {
	t.Helper()
	c, err := catalog.Default()
	require.NoError(t, err)
	return NewNormalizer(c)
}

// decodeJSON decodes a JSON literal the way ReadRows does (numbers as
// float64).
func decodeJSON(t testing.TB, literal string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(literal), &v), literal)
	return v
}

// mod changes a test row.
type mod func(t testing.TB, row map[string]any)

// set sets key to a JSON literal.
func set(key, literal string) mod {
	return func(t testing.TB, row map[string]any) { row[key] = decodeJSON(t, literal) }
}

// del removes key.
func del(keys ...string) mod {
	return func(_ testing.TB, row map[string]any) {
		for _, k := range keys {
			delete(row, k)
		}
	}
}

func build(t testing.TB, base string, mods ...mod) map[string]any {
	t.Helper()
	row, ok := decodeJSON(t, base).(map[string]any)
	require.True(t, ok)
	for _, m := range mods {
		m(t, row)
	}
	return row
}

// Rows of the reference ingest's benchmark-mapper tests.
const (
	v1Base = `{"infmax_model_prefix":"dsr1","hw":"h200-nv","framework":"vllm","precision":"fp8",
		"isl":1024,"osl":1024,"conc":64,"tp":8,"ep":1,"dp_attention":false,
		"tput_per_gpu":1234.5,"median_ttft":50.2,"mean_tpot":12.3}`
	agenticBase = `{"infmax_model_prefix":"dsv4","hw":"b200-nv","framework":"vllm","precision":"fp4",
		"scenario_type":"agentic-coding","users":72,"tput_per_gpu":20000}`
	v2Base = `{"infmax_model_prefix":"dsr1","hw":"h200-nv","framework":"sglang","precision":"fp8",
		"isl":1024,"osl":8192,"conc":128,
		"prefill_tp":4,"prefill_ep":2,"prefill_dp_attention":false,"prefill_num_workers":1,
		"decode_tp":2,"decode_ep":4,"decode_dp_attention":true,"decode_num_workers":2,
		"num_prefill_gpu":8,"num_decode_gpu":8,"tput_per_gpu":567.8}`
	// v3Base is the trimmed real AgentX aggregate of run 28553943579.
	v3Base = `{"infmax_model_prefix":"dsv4","hw":"cluster:b300-nv","framework":"vllm","precision":"fp4",
		"spec_decoding":"none","disagg":false,"scenario_type":"agentic-coding","is_multinode":false,
		"tp":4,"ep":1,"dp_attention":"false","conc":16,"image":"vllm/vllm-openai:v0.23.0",
		"kv_offloading":"none","kv_offload_backend":"","num_requests_total":1648,"num_requests_successful":1648,
		"dataset":{"source_type":"public_dataset","hf_dataset_name":"semianalysisai/cc-traces-weka-062126"},
		"request_metrics":{
		  "qps":{"window_seconds":1,"samples":7209,"mean":0.22846,"p50":0,"p75":0,"p90":1,"p95":1,"std":0.60707},
		  "latency":{
		    "ttft":{"mean":12.90033,"p50":1.49712,"p75":12.09501,"p90":56.22194,"p95":68.03156,"std":22.68353},
		    "e2el":{"mean":81.05644,"p50":26.18817,"p75":84.93601,"p90":199.85996,"p95":360.31579,"std":149.59205},
		    "itl":{"mean":0.07548,"p50":0.03677,"p75":0.10253,"p90":0.16652,"p95":0.22255,"std":0.08327},
		    "tpot":{"mean":0.07548,"p50":0.03677,"p75":0.10253,"p90":0.16652,"p95":0.22255,"std":0.08327},
		    "intvty":{"mean":13.2482,"p50":27.19411,"p75":9.75304,"p90":6.00526,"p95":4.49335,"std":24.77636}},
		  "tokens":{
		    "input":{"mean":157676.054,"p50":96047,"p75":197684.25,"p90":404935.9,"p95":547502.85,"std":152480.17653},
		    "output_actual":{"mean":849.06735,"p50":290.5,"p75":783.5,"p90":2231.8,"p95":3915.45,"std":1568.90823},
		    "output_expected":{"mean":1432.32728,"p50":571.5,"p75":1820,"p90":3927,"p95":5312.9,"std":2067.19215}},
		  "throughput":{"input":{"tokens_per_second":35980.14001},"output":{"tokens_per_second":193.7489},
		    "total":{"tokens_per_second":36173.88892},"duration_seconds":7222.04352,
		    "per_gpu":{"total_tput_tps":9043.47223,"output_tput_tps":48.43723,"input_tput_tps":8995.035}},
		  "cache":{"theoretical_cache_hit_rate":0.97509}},
		"server_metrics":{"present":true,"adapter":"vllm","metric_count":49,
		  "cache":{"gpu_cache_hit_rate":0.78539,"cpu_cache_hit_rate":0,"external_cache_hit_rate":0,
		    "overall_cache_hit_rate":0.78539,"prefix_cache_hits":205576960,"prefix_cache_queries":261750519,
		    "frontend_cache_hit_rate":null},
		  "kv_cache":{"gpu_usage_pct":0.82134,"cpu_usage_pct":null,"cpu_used_tokens":null},
		  "tokens":{"prompt_total":261750519,"generation_total":1422696,"requests_completed":1648,
		    "prompt_by_source":{"gpu_cache_hit":205576960,"cpu_or_external_cache_hit":0,"computed":56173559}},
		  "sources":[{"id":"combined|http://localhost:8888/metrics|engine=0","role":"combined"}]}}`
)
