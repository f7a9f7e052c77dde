package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's stored-row facts (benchmark-point-backfill.test): a
// correction extended with cache-hit fields applies over its previous
// version and then once only; without the previous version registered,
// a row under the corrected identity is refused, as is any unexpected
// destination; an untouched source is corrected with unrelated metrics
// kept; malformed metrics are refused; a correction resting on audited
// metrics is refused when they changed.
func TestPlanStoredRow(t *testing.T) {
	previous := PointPatch{OffloadMode: "on", MetricsRemove: []string{"allocated_cpu_dram_gb"},
		MetricsMerge: map[string]any{"kv_offloading": "dram", "kv_offload_backend": "mooncake", "kv_offload_backend_version": "0.3.11.post1"}}
	b := OverridePointBackfill{ID: "run-31633154542-config-2106-conc-256-mooncake-offload", RunID: 31633154542, Attempt: 2,
		Point: BenchmarkPoint{BenchmarkType: "agentic_traces", Conc: 256, OffloadMode: "off"}, PreviousSet: &previous,
		Set: PointPatch{OffloadMode: "on", MetricsRemove: []string{"allocated_cpu_dram_gb"}, MetricsMerge: map[string]any{
			"kv_offloading": "dram", "kv_offload_backend": "mooncake", "kv_offload_backend_version": "0.3.11.post1",
			"server_gpu_cache_hit_rate": 0.11829426868903234, "server_external_cache_hit_rate": 0.84522, "server_cpu_cache_hit_rate": 0.8500825947463053}}}
	prior := map[string]any{"offload_mode": "on", "kv_offloading": "dram", "kv_offload_backend": "mooncake", "kv_offload_backend_version": "0.3.11.post1"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range prior {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	row := with(map[string]any{"output_tput_per_gpu": 123.45, "median_itl": 0.025})
	noPrevious := b
	noPrevious.PreviousSet = nil
	_, err := noPrevious.PlanStoredRow("on", row)
	require.ErrorContains(t, err, "holds other data")
	next, err := b.PlanStoredRow("on", row)
	require.NoError(t, err)
	require.Equal(t, 123.45, next["output_tput_per_gpu"])
	require.Greater(t, next["server_gpu_cache_hit_rate"], 0.0)
	require.Greater(t, next["server_cpu_cache_hit_rate"], 0.0)
	again, err := b.PlanStoredRow("on", next)
	require.NoError(t, err)
	require.Nil(t, again, "applied once")
	require.NotContains(t, row, "server_gpu_cache_hit_rate", "the stored row is not modified in place")

	for _, unexpected := range []map[string]any{{"kv_offload_backend": "lmcache"}, {"kv_offload_backend_version": "wrong-version"},
		{"offload_mode": "off"}, {"allocated_cpu_dram_gb": 0.0}} {
		_, err := b.PlanStoredRow("on", with(unexpected))
		require.ErrorContains(t, err, "holds other data", "%v", unexpected)
	}

	next, err = b.PlanStoredRow("off", map[string]any{"allocated_cpu_dram_gb": 0.0, "output_tput_per_gpu": 42.0})
	require.NoError(t, err)
	require.Equal(t, 42.0, next["output_tput_per_gpu"])
	require.Equal(t, "on", next["offload_mode"])
	require.NotContains(t, next, "allocated_cpu_dram_gb")

	_, err = b.PlanStoredRow("off", nil)
	require.ErrorContains(t, err, "not a JSON object")

	power := OverridePointBackfill{ID: "run-33348766792-row-440673-measured-p90-power", Point: BenchmarkPoint{OffloadMode: "off"},
		ExpectedMetrics: map[string]any{"power_valid": 1.0, "power_metric_schema_version": 2.0, "avg_power_w": 530.522},
		Set:             PointPatch{MetricsMerge: map[string]any{"p90_power_w": 633.299, "p90_total_gpu_power_w": 2533.195}}}
	audited := map[string]any{"power_valid": 1.0, "power_metric_schema_version": 2.0, "avg_power_w": 530.522, "median_itl": 0.01}
	for _, changed := range []map[string]any{{"power_valid": 0.0}, {"power_metric_schema_version": 1.0}, {"avg_power_w": -1.0}} {
		m := map[string]any{}
		for k, v := range audited {
			m[k] = v
		}
		for k, v := range changed {
			m[k] = v
		}
		_, err := power.PlanStoredRow("off", m)
		require.ErrorContains(t, err, "differ from the audited measurement", "%v", changed)
		p := BenchmarkPoint{OffloadMode: "off", Metrics: m}
		require.False(t, power.ApplyTo(&p), "withheld at ingest")
		require.NotContains(t, p.Metrics, "p90_power_w")
	}
	delete(audited, "power_valid")
	_, err = power.PlanStoredRow("off", audited)
	require.ErrorContains(t, err, "differ from the audited measurement", "a missing audited key")
	audited["power_valid"] = 1.0
	patched, err := power.PlanStoredRow("off", audited)
	require.NoError(t, err)
	require.Equal(t, 633.299, patched["p90_power_w"])
	require.Equal(t, 0.01, patched["median_itl"])
	again, err = power.PlanStoredRow("off", patched)
	require.NoError(t, err)
	require.Nil(t, again)
}
