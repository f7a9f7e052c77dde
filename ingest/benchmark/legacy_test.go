package benchmark

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestISLOSLFromName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		isl, osl int
		ok       bool
	}{
		{"test_32k16k_result.json", 32768, 16384, true},
		{"sweep-1k1k-12345", 1024, 1024, true},
		{"bmk_dsr1_8k1k_fp4_sglang", 8192, 1024, true},
		{"x1k1ky", 0, 0, false},
		{"agg_bmk.json", 0, 0, false},
		{"1k1k", 1024, 1024, true},
		{"0k1k", 0, 0, false},
	}
	for _, c := range cases {
		isl, osl, ok := ISLOSLFromName(c.name)
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, [2]int{c.isl, c.osl}, [2]int{isl, osl}, c.name)
	}
}

func TestFillISLOSLFromNames(t *testing.T) {
	t.Parallel()
	row := map[string]any{"conc": 4.0}
	require.True(t, FillISLOSLFromNames(row, "agg_bmk.json", "results_1k8k"))
	require.Equal(t, map[string]any{"conc": 4.0, "isl": 1024.0, "osl": 8192.0}, row)

	row = map[string]any{"isl": 2048.0}
	require.True(t, FillISLOSLFromNames(row, "run_8k1k"))
	require.Equal(t, 2048.0, row["isl"], "the row's own value wins")
	require.Equal(t, 1024.0, row["osl"])

	agentic := map[string]any{"scenario_type": "agentic-coding"}
	require.False(t, FillISLOSLFromNames(agentic, "x_8k1k"))
	require.NotContains(t, agentic, "isl")
	require.False(t, FillISLOSLFromNames(map[string]any{}, "nothing-here"))
}

func TestRepairLegacyTPURow(t *testing.T) {
	t.Parallel()
	tpu := func(tp float64) map[string]any {
		return map[string]any{"hw": "tpuv7", "model": "Qwen/Qwen3.5-397B-A17B-FP8", "framework": "vllm", "precision": "fp8",
			"spec_decoding": "none", "isl": 8192.0, "osl": 1024.0, "tp": tp, "ep": 1.0, "disagg": false, "is_multinode": false,
			"tput_per_gpu": 800.0, "input_tput_per_gpu": 720.0, "output_tput_per_gpu": 80.0}
	}
	row := tpu(1)
	require.True(t, RepairLegacyTPURow(30864013158, row))
	require.Equal(t, 4.0, row["num_gpus"])
	require.Equal(t, 8.0, row["dp"])
	require.Equal(t, 100.0, row["tput_per_gpu"])
	require.Equal(t, 10.0, row["output_tput_per_gpu"])
	require.False(t, RepairLegacyTPURow(30864013158, row), "idempotent: a repaired row has num_gpus")
	require.Equal(t, 100.0, row["tput_per_gpu"])

	row = tpu(8)
	require.True(t, RepairLegacyTPURow(30864013158, row))
	require.Equal(t, 1.0, row["dp"])
	require.Equal(t, 800.0, row["tput_per_gpu"])

	upper := tpu(8)
	upper["hw"] = "TPUV7"
	require.True(t, RepairLegacyTPURow(30864013158, upper), "hw in any case, as the eval aggregator spells it")
	require.Equal(t, 4.0, upper["num_gpus"])

	// The reference's other conditions: an explicit ep of 1, spec_decoding
	// "none", no explicit count or dp, not disaggregated.
	for name, edit := range map[string]func(map[string]any){
		"ep absent":   func(r map[string]any) { delete(r, "ep") },
		"spec absent": func(r map[string]any) { delete(r, "spec_decoding") },
		"num_gpus 16": func(r map[string]any) { r["num_gpus"] = 16.0 },
		"dp 8":        func(r map[string]any) { r["dp"] = 8.0 },
		"disagg":      func(r map[string]any) { r["disagg"] = true },
		"other model": func(r map[string]any) { r["model"] = "another-model" },
		"tp 2":        func(r map[string]any) { r["tp"] = 2.0 },
	} {
		row := tpu(1)
		edit(row)
		require.False(t, RepairLegacyTPURow(30864013158, row), name)
		require.Equal(t, 800.0, row["tput_per_gpu"], name)
	}

	// An eval aggregate row's mirrored roles: one worker each becomes none.
	roles := tpu(1)
	roles["prefill_tp"], roles["prefill_num_workers"], roles["decode_num_workers"] = 1.0, 1.0, 1.0
	dp, ok := RepairLegacyTPUDeployment(30864013158, roles, 8192, 1024)
	require.True(t, ok)
	require.Equal(t, 8, dp)
	require.Equal(t, []any{0.0, 0.0}, []any{roles["prefill_num_workers"], roles["decode_num_workers"]})
	_, ok = RepairLegacyTPUDeployment(30864013158, tpu(1), 1024, 1024)
	require.False(t, ok, "1k1k is not the sweep")

	require.False(t, RepairLegacyTPURow(1, tpu(1)), "another run")
	other := tpu(4)
	require.False(t, RepairLegacyTPURow(30864013158, other), "tp 4 is not the legacy shape")

	// The repaired row normalizes to a 4-chip deployment.
	row = tpu(1)
	row["conc"] = 8.0
	RepairLegacyTPURow(30864013158, row)
	p, o := newTestNormalizer(t).Normalize(row)
	require.Equal(t, OK, o.Kind, "%+v", o)
	require.Equal(t, 4, p.Config.NumPrefillGPU)
	require.Equal(t, 8.0, p.Metrics["dp"])
}
