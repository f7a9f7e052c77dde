package cli_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestEmbeddedLedgerPurges: with no --overrides file, an ingest of a run
// the reference's ledger purges (a whole run; an attempt of a run) stores
// nothing, and the ingest ledger says purged with the entry's reason; an
// attempt the ledger does not name is stored.
func TestEmbeddedLedgerPurges(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	for _, tt := range []struct {
		name    string
		run     lineRun
		purged  bool
		reason  string
		storedN int64
	}{
		{"purged run", lineRun{id: 20286769842, concs: []int{4, 8}}, true, "long ago: broken run", 0},
		{"purged attempt", lineRun{id: 25199291771, attempt: 1, concs: []int{4, 8}}, true,
			"2026-05-01: dsv4 GB200 dynamo-vllm MTP2: only 2 of 6 conc points uploaded on both attempts; a rerun is pending", 0},
		{"attempt not purged", lineRun{id: 25199291771, attempt: 3, concs: []int{4, 8}}, false, "", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.run.created, tt.run.started = "2026-05-01T08:00:00Z", "2026-05-01T08:01:00Z"
			sum := loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, tt.run))
			if tt.purged {
				require.Equal(t, schema.StatusPurged, sum.Status)
				require.Equal(t, tt.reason, sum.Details.PurgeReason)
			} else {
				require.Equal(t, schema.StatusSucceeded, sum.Status)
			}
			require.Equal(t, []int64{tt.storedN}, queryInt64s(t, db,
				`SELECT count(*) FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id WHERE w.github_run_id = $1`, tt.run.id))
		})
	}
}

// TestEmbeddedLedgerConclusion: a run GitHub reports failed, which the
// reference's ledger corrects to success, is stored as a success.
func TestEmbeddedLedgerConclusion(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, lineRun{id: 22806827144, created: "2026-03-07T08:00:00Z",
		started: "2026-03-07T08:01:00Z", concs: []int{4}, outcome: "failure"}))
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var conclusion string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT conclusion FROM workflow_runs WHERE github_run_id = 22806827144`).Scan(&conclusion))
	require.Equal(t, "success", conclusion)
}

// TestEmbeddedLedgerPointBackfill: a stored row with the identity one of
// the reference's point backfills names (run 31927376673 attempt 1, the
// GB300 dynamo-trt Qwen3.5 1P1D point at conc 44, reported not offloaded)
// is corrected by `ingest overrides apply` with no --overrides file: its
// offload mode and metrics carry the backfill's values.
func TestEmbeddedLedgerPointBackfill(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	const runID = 31927376673
	loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, lineRun{id: runID, created: "2026-08-10T08:00:00Z",
		started: "2026-08-10T08:01:00Z", concs: []int{44}}))
	// Give the stored row the identity production stores for that point.
	execSQL(t, db, `UPDATE configs c SET hardware = 'gb300', framework = 'dynamo-trt', model = 'qwen3.5', precision = 'fp4',
		spec_method = 'mtp', disagg = true, is_multinode = true, prefill_tp = 1, prefill_ep = 1, prefill_dp_attention = true,
		prefill_num_workers = 1, decode_tp = 2, decode_ep = 2, decode_dp_attention = false, decode_num_workers = 1,
		num_prefill_gpu = 1, num_decode_gpu = 2
		FROM benchmark_results b WHERE b.config_id = c.id`)
	execSQL(t, db, `UPDATE benchmark_results SET benchmark_type = 'agentic_traces', isl = NULL, osl = NULL,
		recipe_fingerprint = 'ac8406a4d46f3711732aa352c801bbd1eb7c3545b2982c5d2c56520fa8288342',
		metrics = metrics || '{"allocated_cpu_dram_gb": 128, "offload_mode": "off"}'`)

	r := run(t, vars, "overrides", "apply")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "point backfill run-31927376673-config-2365-conc-44-native-offload")
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var offload, metrics string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT offload_mode, jsonb_build_object('offload_mode', metrics->'offload_mode',
		'kv_offloading', metrics->'kv_offloading', 'kv_offload_backend', metrics->'kv_offload_backend',
		'kv_offload_backend_version', metrics->'kv_offload_backend_version', 'allocated_cpu_dram_gb', metrics->'allocated_cpu_dram_gb')::text
		FROM benchmark_results`).Scan(&offload, &metrics))
	require.Equal(t, "on", offload)
	require.JSONEq(t, `{"offload_mode":"on","kv_offloading":"dram","kv_offload_backend":"native","kv_offload_backend_version":"1.3.0rc24",
		"allocated_cpu_dram_gb":null}`, metrics)
}
