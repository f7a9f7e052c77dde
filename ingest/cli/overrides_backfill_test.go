package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestOverridesApplyBackfills: a point backfill added to the ledger after
// the run was ingested is reported by `ingest overrides apply` (dry run:
// what it would rewrite; apply: what it rewrote, by table and entry), the
// dashboard serves the corrected value, a second apply rewrites nothing;
// a backfill whose corrected identity is already stored is refused with
// exit 1, naming the backfill, and nothing changes.
func TestOverridesApplyBackfills(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	const runID = 29000000300
	loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, lineRun{id: runID, created: "2026-11-03T08:00:00Z", started: "2026-11-03T08:01:00Z", concs: []int{4, 8}}))

	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var config string
	var attempt int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT w.run_attempt, json_build_object('hardware', c.hardware, 'framework', c.framework,
		'model', c.model, 'precision', c.precision, 'spec_method', c.spec_method, 'disagg', c.disagg, 'is_multinode', c.is_multinode,
		'prefill_tp', c.prefill_tp, 'prefill_ep', c.prefill_ep, 'prefill_dp_attention', c.prefill_dp_attention,
		'prefill_num_workers', c.prefill_num_workers, 'decode_tp', c.decode_tp, 'decode_ep', c.decode_ep,
		'decode_dp_attention', c.decode_dp_attention, 'decode_num_workers', c.decode_num_workers,
		'num_prefill_gpu', c.num_prefill_gpu, 'num_decode_gpu', c.num_decode_gpu)::text
		FROM benchmark_results b JOIN configs c ON c.id = b.config_id JOIN workflow_runs w ON w.id = b.workflow_run_id WHERE b.conc = 8`).Scan(&attempt, &config))
	entry := func(id string, conc int, set string) string {
		return fmt.Sprintf(`{"id":%q,"reason":"audited correction","runId":%d,"attempt":%d,"config":%s,"benchmarkType":"single_turn",
			"isl":1024,"osl":1024,"conc":%d,"offloadMode":"off","recipeFingerprint":null,"set":%s}`, id, runID, attempt, config, conc, set)
	}
	ledger := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ledger, []byte(`{"benchmarkPointBackfills":[`+
		entry("run-29000000300-conc-8-p90-power", 8, `{"metricsMerge":{"p90_power_w":812.5}}`)+`]}`), 0o644))

	r := run(t, vars, "overrides", "apply", "--overrides", ledger, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "dry run: nothing was changed; applying would")
	require.Contains(t, r.stdout, "1 benchmark rows (point backfills), 0 changelog rows (changelog backfills)")
	require.Contains(t, r.stdout, "run overrides: run 29000000300 attempt 1 point backfill run-29000000300-conc-8-p90-power: dsr1 fp8 b200 sglang single_turn 1024/1024 conc 8 offload off (audited correction): 1 stored benchmark row rewritten")
	served := func() string {
		var v *string
		require.NoError(t, conn.QueryRow(t.Context(), `SELECT metrics->>'p90_power_w' FROM latest_benchmarks WHERE conc = 8`).Scan(&v))
		if v == nil {
			return ""
		}
		return *v
	}
	require.Empty(t, served(), "a dry run rewrites nothing")

	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "rewrote: 0 conclusions, 0 rows' GPU power, 0 telemetry series' GPU power, 1 benchmark rows (point backfills)")
	require.Equal(t, "812.5", served(), "the dashboard shows the corrected value")
	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "nothing changed")

	// conc 4 turned on while an "on" copy of it is stored: a collision.
	_, err = conn.Exec(t.Context(), `INSERT INTO benchmark_results (workflow_run_id, config_id, benchmark_type, date, isl, osl, conc,
		offload_mode, recipe_fingerprint, metrics, content_digest, source_artifact, source_file, source_row, ingest_id)
		SELECT workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, 'on', recipe_fingerprint, metrics, content_digest,
			source_artifact, source_file, source_row, ingest_id FROM benchmark_results WHERE conc = 4`)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ledger, []byte(`{"benchmarkPointBackfills":[`+
		entry("run-29000000300-conc-4-offload", 4, `{"offloadMode":"on","metricsMerge":{"kv_offloading":"dram"}}`)+`]}`), 0o644))
	applications := count(t, db, "override_applications")
	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "point backfill run-29000000300-conc-4-offload: run 29000000300 attempt 1 stores the point under its source (offload off) and its corrected identity (offload on): the correction would collide with an existing point (nothing was changed)")
	require.Equal(t, applications, count(t, db, "override_applications"))
	require.Equal(t, int64(1), queryInt64s(t, db, `SELECT count(*) FROM benchmark_results WHERE conc = 4 AND offload_mode = 'off'`)[0])
}
