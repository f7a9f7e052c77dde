package ingest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// demoSamples is the sum of the samples of the demo's seven stored series
// (fixtures/DEMO.md, "Telemetry").
const demoSamples = 19272

const (
	conc16Telemetry = "gpu_metrics_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_b200-cw_00_recipe-341408ee19f26bfd"
	conc32Telemetry = "gpu_metrics_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc32_b200-nb_0_recipe-341408ee19f26bfd"
)

// requireDemoTelemetry checks the telemetry half of the demo's design.
func requireDemoTelemetry(t *testing.T, e *env, sum *schema.Summary, rerun bool) {
	t.Helper()
	if rerun {
		require.Equal(t, schema.Counts{Duplicate: 7, Skipped: 3, Unmapped: 1, Failed: 1}, sum.Rows.Power)
		require.Zero(t, sum.Stats.GPUMetricSamplesNew)
	} else {
		require.Equal(t, schema.Counts{New: 7, Skipped: 3, Unmapped: 1, Failed: 1}, sum.Rows.Power)
		require.EqualValues(t, demoSamples, sum.Stats.GPUMetricSamplesNew)
	}
	require.EqualValues(t, 7, sum.Stats.PowerPublicationPoints)
	require.Contains(t, sum.Failures, schema.Failure{Category: schema.CategoryPower, Artifact: conc16Telemetry,
		File: "gpu_metrics.csv", Reason: "line 785: row has 3 fields, the header 8"})
	require.Len(t, sum.PowerWarnings, 1)
	w := sum.PowerWarnings[0]
	require.Equal(t, conc32Telemetry, w.Artifact)
	require.Equal(t, "avg_power_w", w.Field)
	require.InDelta(t, 0.15, w.RelDiff, 0.01)
	require.Equal(t, demoSamples, e.count(`SELECT count(*) FROM gpu_metric_samples`))
	require.Equal(t, 7, e.count(`SELECT count(*) FROM benchmark_result_gpu_metrics`))
	// The power_audit_ series integrates over its validation's window.
	require.Equal(t, 1, e.count(`SELECT count(*) FROM gpu_metric_series WHERE artifact_name LIKE 'power_audit_%'
		AND window_source LIKE 'power_validation_%.json' AND window_end - window_start < ended_at - started_at`))
}
