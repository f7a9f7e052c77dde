package benchmarks

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// TestWithServerMetrics states what an AgentX row is written with before
// the traces stage sees it: the producer's values of the owned keys moved
// to published_*, the keys derived from the row alone (token totals from
// the client means), the marker, the rest of its metrics as they were;
// non-numbers of owned keys dropped; other rows untouched.
func TestWithServerMetrics(t *testing.T) {
	cfg := schema.Config{Framework: "vllm", PrefillTP: 4, DecodeTP: 4, PrefillEP: 1, DecodeEP: 1}
	for _, tc := range []struct {
		name    string
		typ     string
		metrics map[string]any
		want    map[string]any // nil: StoredMetrics stays unset
		// from: ServerMetricsFrom's metrics, the numbers of want among
		// the server-metric inputs
		from map[string]float64
	}{
		{"single-turn rows are not touched", schema.BenchmarkSingleTurn,
			map[string]any{"total_prompt_tokens": 5.0}, nil, nil},
		{"client totals, a published value kept aside", schema.BenchmarkAgenticTraces,
			map[string]any{"mean_input_tokens": 100.0, "mean_output_tokens_actual": 20.5, "total_requests_completed": 10.0,
				"total_prompt_tokens": 999.0, "tput_per_gpu": 3.0, "note": "x"},
			map[string]any{"mean_input_tokens": 100.0, "mean_output_tokens_actual": 20.5, "total_requests_completed": 10.0,
				"published_total_prompt_tokens": 999.0, "total_prompt_tokens": 1000.0, "total_generation_tokens": 205.0,
				"tput_per_gpu": 3.0, "note": "x", trace.ServerMetricsMarker: float64(trace.ServerMetricsVersion)},
			map[string]float64{"mean_input_tokens": 100, "mean_output_tokens_actual": 20.5, "total_requests_completed": 10,
				"published_total_prompt_tokens": 999, "total_prompt_tokens": 1000, "total_generation_tokens": 205,
				trace.ServerMetricsMarker: trace.ServerMetricsVersion}},
		{"json numbers count, non-numbers of owned keys go", schema.BenchmarkAgenticTraces,
			map[string]any{"mean_input_tokens": json.Number("8"), "total_requests_completed": 2,
				"server_gpu_cache_hit_rate": "n/a", "gpu_kv_cache_usage_pct": math.NaN()},
			map[string]any{"mean_input_tokens": json.Number("8"), "total_requests_completed": 2,
				"total_prompt_tokens": 16.0, trace.ServerMetricsMarker: float64(trace.ServerMetricsVersion)},
			map[string]float64{"mean_input_tokens": 8, "total_requests_completed": 2, "total_prompt_tokens": 16,
				trace.ServerMetricsMarker: trace.ServerMetricsVersion}},
		{"a row already marked keeps its published copies", schema.BenchmarkAgenticTraces,
			map[string]any{trace.ServerMetricsMarker: 1.0, "published_total_prompt_tokens": 7.0, "total_prompt_tokens": 3.0},
			map[string]any{trace.ServerMetricsMarker: float64(trace.ServerMetricsVersion), "published_total_prompt_tokens": 7.0},
			map[string]float64{trace.ServerMetricsMarker: trace.ServerMetricsVersion, "published_total_prompt_tokens": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := schema.StagedBenchmark{Point: schema.BenchmarkPoint{Config: cfg, BenchmarkType: tc.typ, Metrics: tc.metrics}}
			withServerMetrics(&r)
			if tc.want == nil {
				require.Nil(t, r.StoredMetrics)
				require.Nil(t, r.ServerMetricsFrom)
				return
			}
			require.Equal(t, tc.want, r.StoredMetrics)
			require.Equal(t, &schema.TraceRowLink{Config: cfg, Metrics: tc.from}, r.ServerMetricsFrom,
				"what a read-back of the written row gives the traces stage")
			_, still := r.Point.Metrics[trace.ServerMetricsMarker]
			_, had := tc.metrics[trace.ServerMetricsMarker]
			require.Equal(t, had, still, "the point's own metrics (the digest's input) are not changed")
		})
	}
}
