package cli_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// dashboardQueries reads the named SQL blocks of docs/dashboard-schema.md:
// the test runs exactly what the guide documents.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/dashboard-schema.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?s)```sql\n-- query: ([a-z-]+)[^\n]*\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = m[2]
	}
	require.Len(t, out, 5, "the guide documents five queries")
	return out
}

// dashboardConn connects as the dashboard would: search_path dashboard,
// public, so the compatibility views shadow the tables that differ.
func dashboardConn(t *testing.T, db string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(db)
	require.NoError(t, err)
	cfg.RuntimeParams["search_path"] = "dashboard,public"
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(t.Context()) })
	return conn
}

func queryMaps(t *testing.T, conn *pgx.Conn, sql string, args ...any) []map[string]any {
	t.Helper()
	rows, err := conn.Query(t.Context(), sql, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToMap)
	require.NoError(t, err)
	return out
}

// TestDashboardQueries: the queries the dashboard sends return the demo
// run's rows in the shapes the site expects (fixtures/DEMO.md: one
// qwen3.5 config on b200 swept over conc 4…512, AgentX points, three
// gsm8k evals with samples, two changelog entries).
func TestDashboardQueries(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	q := dashboardQueries(t)
	conn := dashboardConn(t, db)
	const runURL = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/28485856738"

	t.Run("latest chart", func(t *testing.T) {
		rows := queryMaps(t, conn, q["latest-chart"], []string{"qwen3.5"})
		type point struct {
			hw, fw, typ string
			conc        int32
		}
		var got []point
		for _, r := range rows {
			got = append(got, point{r["hardware"].(string), r["framework"].(string), r["benchmark_type"].(string), r["conc"].(int32)})
			require.Equal(t, "qwen3.5", r["model"])
			require.Equal(t, "2026-11-20", r["date"])
			require.Equal(t, runURL+"/attempts/2", r["run_url"])
			require.Equal(t, "lmsysorg/sglang:v0.5.14-cu130", r["image"])
			require.IsType(t, map[string]any{}, r["metrics"])
			// One full run: every row is its own curve's snapshot.
			require.Equal(t, "2026-11-20", r["curve_date"])
			require.Equal(t, r["workflow_run_id"], r["curve_workflow_run_id"])
			require.Equal(t, r["run_started_at"], r["curve_run_started_at"])
			require.Nil(t, r["kv_transfer_lib"])
			if r["benchmark_type"] == "single_turn" {
				require.Equal(t, int32(8192), r["isl"])
				require.Equal(t, int32(1024), r["osl"])
				require.Contains(t, r["metrics"], "tput_per_gpu")
			} else {
				require.Nil(t, r["isl"])
			}
		}
		b200, agentic := "b200", "agentic_traces"
		require.Equal(t, []point{
			{b200, "sglang", "single_turn", 4}, {b200, "sglang", agentic, 4}, {b200, "sglang", "single_turn", 8},
			{b200, "sglang", "single_turn", 16}, {b200, "sglang", "single_turn", 32}, {b200, "sglang", agentic, 32},
			{b200, "sglang", "single_turn", 64}, {b200, "sglang", "single_turn", 128}, {b200, "sglang", "single_turn", 256},
			{b200, "sglang", "single_turn", 512}, {b200, "vllm", agentic, 8}, {"gb200", "dynamo-sglang", agentic, 16},
		}, got)
		require.Empty(t, queryMaps(t, conn, q["latest-chart"], []string{"dsr1"}), "dsr1 has evals only")
	})

	var evalIDs []int64
	t.Run("run evals", func(t *testing.T) {
		rows := queryMaps(t, conn, q["run-evals"], int64(28485856738))
		type ev struct {
			hw, model, fw string
			conc          int32
		}
		var got []ev
		for _, r := range rows {
			got = append(got, ev{r["hardware"].(string), r["model"].(string), r["framework"].(string), r["conc"].(int32)})
			evalIDs = append(evalIDs, r["id"].(int64))
			require.Equal(t, "gsm8k", r["task"])
			require.Equal(t, "2026-11-20T08:00:00Z", r["timestamp"])
			require.Equal(t, runURL, r["run_url"])
			m := r["metrics"].(map[string]any)
			require.Contains(t, m, "em_strict")
			require.Contains(t, m, "n_eff")
		}
		require.Equal(t, []ev{{"b200", "qwen3.5", "sglang", 64}, {"gb200", "dsr1", "dynamo-sglang", 4}, {"gb200", "dsr1", "dynamo-sglang", 64}}, got)
		require.Empty(t, queryMaps(t, conn, q["run-evals"], int64(1)))
	})

	t.Run("eval samples", func(t *testing.T) {
		require.Len(t, evalIDs, 3)
		// The b200 config: 1319 documents, each stored as two filter lines,
		// shown once.
		page := queryMaps(t, conn, q["eval-samples"], evalIDs[0])
		require.Len(t, page, 20)
		for i, r := range page {
			require.Equal(t, int32(i), r["doc_id"])
			require.NotEmpty(t, r["prompt"], "the prompt text is inline")
			require.NotEmpty(t, r["target"])
			require.NotEmpty(t, r["raw_response"], "resps[0][0] from the stored outputs")
			require.IsType(t, map[string]any{}, r["arguments_data"])
			require.NotNil(t, r["passed"])
		}
		counts := queryMaps(t, conn, q["eval-sample-counts"], evalIDs[0])
		require.Equal(t, []map[string]any{{"total_all": int32(1319), "passed_total": int32(1260), "failed_total": int32(59)}}, counts)
		// A GB200 config: ten documents.
		require.Len(t, queryMaps(t, conn, q["eval-samples"], evalIDs[1]), 10)
		counts = queryMaps(t, conn, q["eval-sample-counts"], evalIDs[1])
		require.Equal(t, int32(10), counts[0]["total_all"])
		// Without the views the same query fails: the table has no prompt.
		plain, err := pgx.Connect(t.Context(), db)
		require.NoError(t, err)
		defer plain.Close(t.Context())
		_, err = plain.Exec(t.Context(), q["eval-samples"], evalIDs[0])
		require.ErrorContains(t, err, "prompt")
	})

	t.Run("run changelog", func(t *testing.T) {
		rows := queryMaps(t, conn, q["run-changelog"], int64(28485856738))
		require.Len(t, rows, 2)
		require.Equal(t, []any{"qwen3.5-fp8-b200-sglang"}, rows[0]["config_keys"])
		require.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/pull/2712", rows[0]["pr_link"])
		require.Contains(t, rows[0]["description"], "Sweep Qwen3.5 FP8 on B200 with SGLang v0.5.14")
		require.Equal(t, []any{"dsr1-fp8-gb200-dynamo-sglang"}, rows[1]["config_keys"])
		for _, r := range rows {
			require.Equal(t, int64(28485856738), r["workflow_run_id"])
			require.Equal(t, "2026-11-20", r["date"])
			require.Equal(t, "9b1e4d7c2a5f8e3b6d0c9a2f5e8b1d4c7a0f3e69", r["base_ref"])
			require.Equal(t, "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a46", r["head_ref"])
		}
	})
}
