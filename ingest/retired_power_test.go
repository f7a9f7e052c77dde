package ingest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// retiredRow is the published row of the second point the legacy amd-smi
// policy retires (run 36507377618 attempt 1: qwen3.5 fp4 on mi355x with
// sglang, tp 4, 8k/1k, conc 4, its recipe fingerprint), with GPU power, CPU
// power, verdicts and a worker breakdown. An extra key set to nil is
// removed.
func retiredRow(extra map[string]any) map[string]any {
	row := benchRow(4, map[string]any{
		"hw": "mi355x", "model": "amd/Qwen3.5-397B-A17B-MXFP4", "precision": "fp4", "tp": 4,
		"image":              "lmsysorg/sglang:v0.5.10-rocm720-mi35x",
		"recipe_fingerprint": "170b36a5df21331385e177fc6e625f2846cbecd536476e9c9cd2ab88a56117d4",
		"power_valid":        1, "power_metric_schema_version": 2, "cpu_power_valid": 1,
		"avg_power_w": 535.0, "avg_total_gpu_power_w": 2140.0, "total_gpu_energy_j": 9.1e6,
		"joules_per_output_token": 2.5, "prefill_joules_per_input_token": 1.5, "decode_joules_per_output_token": 2.5,
		"avg_cpu_socket_power_w": 250.0, "avg_temp_c": 72.0, "mean_ttft": 0.2,
		"workers": []any{map[string]any{"role": "agg", "worker_idx": 0, "num_gpus": 4, "avg_power_w": 535.0, "avg_temp_c": 72.0}},
	})
	for k, v := range extra {
		if v == nil {
			delete(row, k)
			continue
		}
		row[k] = v
	}
	return row
}

// The legacy amd-smi source policy retires the GPU watts and joules of two
// points by exact identity (run, attempt, head commit, full config, point):
// the reference's facts are that only GPU W/J keys and the workers' power go
// (CPU power, verdicts, temperatures and performance stay), another attempt
// or head commit keeps them, an unknown attempt and head still match, and a
// re-ingest never restores them.
func TestLegacyAMDSMIRetirement(t *testing.T) {
	t.Parallel()
	const head = "b9489aead453ae3765bf5882db84031326bf1ff7"
	cases := []struct {
		name    string
		run     schema.RunIdentity
		head    string
		row     map[string]any
		retired bool
	}{
		{"exact identity", RunID(36507377618, 1), head, retiredRow(nil), true},
		// The legacy collector's rows carry no CPU verdict: their CPU-side
		// power stays all the same.
		{"exact identity, no cpu verdict", RunID(36507377618, 1), head, retiredRow(map[string]any{"cpu_power_valid": nil}), true},
		{"head commit unknown", RunID(36507377618, 1), "", retiredRow(nil), true},
		{"another attempt", RunID(36507377618, 2), head, retiredRow(nil), false},
		{"another head commit", RunID(36507377618, 1), strings.Repeat("0", 40), retiredRow(nil), false},
		{"another run", RunID(36507377619, 1), head, retiredRow(nil), false},
		{"another conc", RunID(36507377618, 1), head, retiredRow(map[string]any{"conc": 8}), false},
		{"another recipe", RunID(36507377618, 1), head, retiredRow(map[string]any{"recipe_fingerprint": strings.Repeat("cd", 32)}), false},
		{"another hardware", RunID(36507377618, 1), head, retiredRow(map[string]any{"hw": "mi300x"}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			perJob(t, dir, "qwen3.5_fp4_mi355x_conc4", c.row)
			cfg := ingest.Config{Run: c.run, Meta: schema.RunMeta{HeadSHA: c.head, Name: "Run Sweep"}}
			stored := func() (map[string]any, []map[string]any) {
				var mb, wb []byte
				require.NoError(t, e.pool().QueryRow(context.Background(),
					`SELECT metrics, coalesce(workers, 'null'::jsonb) FROM benchmark_results`).Scan(&mb, &wb))
				var m map[string]any
				var w []map[string]any
				require.NoError(t, json.Unmarshal(mb, &m))
				require.NoError(t, json.Unmarshal(wb, &w))
				return m, w
			}
			for pass := 1; pass <= 2; pass++ {
				sum := e.mustIngest(dir, cfg)
				require.EqualValues(t, 1, sum.Rows.Benchmark.New+sum.Rows.Benchmark.Duplicate, "pass %d", pass)
				m, w := stored()
				require.Equal(t, 0.2, m["mean_ttft"])
				require.Equal(t, 250.0, m["avg_cpu_socket_power_w"], "CPU-side power stays")
				require.Equal(t, 1.0, m["power_valid"], "the verdict stays")
				require.Equal(t, 2.0, m["power_metric_schema_version"])
				require.Equal(t, 72.0, m["avg_temp_c"], "temperatures stay")
				require.Len(t, w, 1)
				require.Equal(t, 72.0, w[0]["avg_temp_c"])
				notes := strings.Join(sum.Notes, "\n")
				if !c.retired {
					require.Equal(t, 535.0, m["avg_power_w"])
					require.Equal(t, 2.5, m["joules_per_output_token"])
					require.Equal(t, 535.0, w[0]["avg_power_w"])
					require.Zero(t, sum.Details.RetiredGPUPowerPoints)
					require.NotContains(t, notes, "amd-smi")
					return
				}
				for _, k := range []string{"avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j", "joules_per_output_token",
					"prefill_joules_per_input_token", "decode_joules_per_output_token"} {
					require.NotContains(t, m, k, "pass %d", pass)
				}
				require.NotContains(t, w[0], "avg_power_w")
				require.EqualValues(t, 1, sum.Details.RetiredGPUPowerPoints, "pass %d", pass)
				require.Contains(t, notes, "1 point has its GPU power retired by the legacy amd-smi source policy")
				if pass == 1 {
					// What an ingest from before the policy stored: the published
					// watts, under the digest of the row that carried them.
					_, err := e.pool().Exec(context.Background(),
						`UPDATE benchmark_results SET metrics = metrics || '{"avg_power_w": 535}'::jsonb, content_digest = sha256('pre-policy row')`)
					require.NoError(t, err)
				} else {
					require.EqualValues(t, 1, sum.Details.BenchmarkRowsUpdated, "the re-ingest removes the restored watts")
				}
			}
		})
	}
}

// The retired source's raw series goes too, as the reference's retirement
// does: the stored AMD series whose CSV bytes are the audited file's
// (matched by sha256; this fixture's bytes differ, so the test stores the
// real file's digest) lose their power samples, per-GPU power statistics
// and power facts, temperatures and clocks stay, another series of the
// run keeps its power; a second apply rewrites nothing; an ingest of the
// run applies it in its transaction, and the next one finds nothing left.
func TestRetiredSourceTelemetryLosesItsPower(t *testing.T) {
	t.Parallel()
	const realCSV = "39e5513048c262624dfc5d91deaf0d1ab45b5f0ba5a77958f1a1012749afd508"
	ctx := context.Background()
	tree := func(t *testing.T) string {
		dir := t.TempDir()
		perJob(t, dir, "qwen3.5_fp4_mi355x_conc4", retiredRow(nil))
		writeFile(t, filepath.Join(dir, "gpu_metrics_qwen3.5_fp4_mi355x_conc4", "gpu_metrics.csv"), amdCSV)
		perJob(t, dir, "qwen3.5_fp4_mi355x_conc8", retiredRow(map[string]any{"conc": 8}))
		writeFile(t, filepath.Join(dir, "gpu_metrics_qwen3.5_fp4_mi355x_conc8", "gpu_metrics.csv"), amdCSV)
		return dir
	}
	cfg := ingest.Config{Run: RunID(36507377618, 1), Meta: schema.RunMeta{HeadSHA: "b9489aead453ae3765bf5882db84031326bf1ff7"}}
	retired := `(SELECT id FROM gpu_metric_series WHERE artifact_name LIKE '%conc4')`
	control := `(SELECT id FROM gpu_metric_series WHERE artifact_name LIKE '%conc8')`
	withPower := func(e *env, series string) int {
		return e.count(`SELECT count(*) FROM gpu_metric_sample_chunks WHERE power_w IS NOT NULL AND series_id = `+series) +
			e.count(`SELECT count(*) FROM gpu_metric_gpu_stats WHERE metric = 'power_w' AND series_id = `+series) +
			e.count(`SELECT count(*) FROM gpu_metric_series WHERE avg_power_w IS NOT NULL AND id = `+series)
	}

	e := newEnv(t)
	dir := tree(t)
	e.mustIngest(dir, cfg)
	require.Positive(t, withPower(e, retired))
	_, err := e.pool().Exec(ctx, `UPDATE gpu_metric_series SET csv_sha256 = $1 WHERE id = `+retired, realCSV)
	require.NoError(t, err)
	temps := e.count(`SELECT count(*) FROM gpu_metric_gpu_stats WHERE metric = 'temperature_c' AND series_id = ` + retired)
	require.Positive(t, temps)

	plan := e.deps.Overrides.Plan(e.deps.Catalog.GPUPowerKeys())
	res, _, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.EqualValues(t, 1, res.TelemetryPowerSeriesRewritten)
	require.Equal(t, "retired_telemetry_power", res.Actions[len(res.Actions)-1].Kind)
	require.Zero(t, withPower(e, retired), "no power samples, statistics or facts")
	require.Equal(t, temps, e.count(`SELECT count(*) FROM gpu_metric_gpu_stats WHERE metric = 'temperature_c' AND series_id = `+retired))
	require.Positive(t, e.count(`SELECT count(*) FROM gpu_metric_sample_chunks WHERE temperature_c IS NOT NULL AND series_id = `+retired))
	require.Positive(t, withPower(e, control), "another series keeps its power")
	again, _, err := e.st.ApplyOverrides(ctx, plan, false, "test")
	require.NoError(t, err)
	require.False(t, again.Changed())

	fresh := newEnv(t)
	fdir := tree(t)
	fresh.mustIngest(fdir, cfg)
	_, err = fresh.pool().Exec(ctx, `UPDATE gpu_metric_series SET csv_sha256 = $1 WHERE id = `+retired, realCSV)
	require.NoError(t, err)
	sum := fresh.mustIngest(fdir, cfg)
	require.EqualValues(t, 1, sum.Details.OverrideRowsRewritten, "%v", sum.Notes)
	require.True(t, hasNote(sum, "source policy: run 36507377618 attempt 1 telemetry 39e5513048c2… of qwen3.5 fp4 mi355x sglang single_turn 8192/1024 conc 4"), "%v", sum.Notes)
	require.Zero(t, withPower(fresh, retired))
	next := fresh.mustIngest(fdir, cfg)
	require.Zero(t, next.Details.OverrideRowsRewritten, "nothing left to retire")
	require.Zero(t, withPower(fresh, retired), "a re-ingest does not restore it")
}
