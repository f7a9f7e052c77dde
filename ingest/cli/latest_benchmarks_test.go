package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// lineRun is a run tree measuring one chart line (dsr1 fp8 sglang on b200,
// TP8, 1k/1k) at the given concurrencies.
type lineRun struct {
	id      int64
	created string // RFC 3339: dates the run
	started string // run_started_at
	concs   []int
	attempt int    // 0: 1
	outcome string // the run's conclusion; "": success
}

func writeLineRun(t *testing.T, r lineRun) string {
	t.Helper()
	dir := t.TempDir()
	var rows []map[string]any
	for _, c := range r.concs {
		rows = append(rows, map[string]any{
			"hw": "b200", "infmax_model_prefix": "dsr1", "model": "deepseek-ai/DeepSeek-R1-0528", "framework": "sglang",
			"precision": "fp8", "spec_decoding": "none", "isl": 1024, "osl": 1024, "conc": c, "tp": 8, "ep": 1,
			"dp_attention": "false", "image": "lmsysorg/sglang:v0.5.9",
			// the values name the run, so a row shows where it came from
			"tput_per_gpu": float64(r.id%1000) + float64(c)/1000, "median_ttft": 0.5, "median_tpot": 0.02,
		})
	}
	body, err := json.Marshal(rows)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "results_bmk"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results_bmk", "agg_bmk.json"), body, 0o644))
	listing := map[string]any{
		"total_count": 1,
		"artifacts":   []map[string]any{{"id": r.id, "name": "results_bmk", "created_at": r.created, "size_in_bytes": len(body), "expired": false}},
		"run": map[string]any{"id": r.id, "run_attempt": 1, "name": "Run Sweep", "status": "completed", "conclusion": "success",
			"created_at": r.created, "run_started_at": r.started},
	}
	if r.attempt != 0 {
		listing["run"].(map[string]any)["run_attempt"] = r.attempt
	}
	if r.outcome != "" {
		listing["run"].(map[string]any)["conclusion"] = r.outcome
	}
	body, err = json.Marshal(listing)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "artifacts.json"), body, 0o644))
	return dir
}

// viewRow is one latest_benchmarks row: which run and concurrency.
type viewRow struct {
	RunID int64
	Conc  int
}

func latestRows(t *testing.T, db string) []viewRow {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT wr.github_run_id, lb.conc FROM latest_benchmarks lb
		JOIN workflow_runs wr ON wr.id = lb.workflow_run_id ORDER BY lb.conc`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (viewRow, error) {
		var v viewRow
		err := r.Scan(&v.RunID, &v.Conc)
		return v, err
	})
	require.NoError(t, err)
	return out
}

func rowsOf(run int64, concs ...int) []viewRow {
	out := make([]viewRow, len(concs))
	for i, c := range concs {
		out[i] = viewRow{run, c}
	}
	return out
}

func execSQL(t *testing.T, db, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	_, err = conn.Exec(t.Context(), sql)
	require.NoError(t, err)
}

func loadSummary(t *testing.T, vars map[string]string, want int, args ...string) schema.Summary {
	t.Helper()
	r := run(t, vars, append(args, "--format", "json")...)
	requireCode(t, want, r)
	return parseSummary(t, r.stdout)
}

// TestLatestBenchmarksOneRunPerLine: the view keeps, per line, the newest
// run only, with every concurrency of that run and nothing of older runs;
// a dry run leaves it as it was; a refresh happens only when something
// changed.
func TestLatestBenchmarksOneRunPerLine(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	full := writeLineRun(t, lineRun{id: 29000000100, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8, 16, 32}})
	partial := writeLineRun(t, lineRun{id: 29000000200, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4, 8}})
	sameDayEarlier := writeLineRun(t, lineRun{id: 29000000300, created: "2026-11-02T06:00:00Z", started: "2026-11-02T06:01:00Z", concs: []int{64}})
	newer := writeLineRun(t, lineRun{id: 29000000400, created: "2026-11-03T08:00:00Z", started: "2026-11-03T08:01:00Z", concs: []int{128}})

	s := loadSummary(t, vars, cli.ExitOK, "load", full)
	require.Equal(t, schema.RefreshRefreshed, s.Details.LatestBenchmarks.Status)
	require.Equal(t, rowsOf(29000000100, 4, 8, 16, 32), latestRows(t, db))

	// The newer run re-swept only conc 4 and 8: the line is truncated to
	// them, nothing of the older run is stitched in.
	loadSummary(t, vars, cli.ExitOK, "load", partial)
	require.Equal(t, rowsOf(29000000200, 4, 8), latestRows(t, db))

	// Same date, earlier start: the later-started run keeps the line.
	loadSummary(t, vars, cli.ExitOK, "load", sameDayEarlier)
	require.Equal(t, rowsOf(29000000200, 4, 8), latestRows(t, db))

	// Rerun: nothing changed, the refresh is skipped.
	s = loadSummary(t, vars, cli.ExitOK, "load", partial)
	require.Equal(t, int64(2), s.Rows.Benchmark.Duplicate)
	require.Equal(t, schema.RefreshSkipped, s.Details.LatestBenchmarks.Status)

	// A dry run of a newer run: reported, rolled back, the view unchanged
	// and not stale.
	s = loadSummary(t, vars, cli.ExitOK, "load", newer, "--dry-run")
	require.Equal(t, int64(1), s.Rows.Benchmark.New)
	require.Nil(t, s.Details.LatestBenchmarks)
	require.Equal(t, rowsOf(29000000200, 4, 8), latestRows(t, db))
	require.Zero(t, count(t, db, "materialized_view_marks"))

	// Errored rows never show: an error on conc 8 of the winning run
	// (written by hand here) drops it after `ingest refresh`.
	execSQL(t, db, `UPDATE benchmark_results SET error = 'oom' WHERE conc = 8 AND workflow_run_id =
		(SELECT id FROM workflow_runs WHERE github_run_id = 29000000200)`)
	require.Equal(t, int64(1), count(t, db, "materialized_view_marks"), "the update marks the view stale")
	r := run(t, vars, "refresh", "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "would be refreshed")
	require.Contains(t, r.stdout, "STALE: 1 change not shown yet")
	require.Equal(t, rowsOf(29000000200, 4, 8), latestRows(t, db), "a dry refresh refreshes nothing")
	r = run(t, vars, "refresh")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "latest_benchmarks refreshed")
	require.Equal(t, rowsOf(29000000200, 4), latestRows(t, db))
	r = run(t, vars, "refresh")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "nothing to refresh")
}

// TestLatestBenchmarksFailedRefresh: a refresh that fails is reported
// (failure, exit 3), leaves the view marked stale with its error in
// `ingest status`, and the next ingest retries it even when that ingest
// changes nothing.
func TestLatestBenchmarksFailedRefresh(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	first := writeLineRun(t, lineRun{id: 29000000500, created: "2026-11-01T08:00:00Z", concs: []int{4, 8}})
	second := writeLineRun(t, lineRun{id: 29000000600, created: "2026-11-02T08:00:00Z", concs: []int{16}})
	loadSummary(t, vars, cli.ExitOK, "load", first)

	// A constraint no row meets makes every update of the view's rows
	// fail: the ingest's own update (undone in its savepoint) and the
	// refresh that retries it after the commit.
	execSQL(t, db, `ALTER TABLE latest_benchmark_points ADD CONSTRAINT broken CHECK (result_id < 0) NOT VALID`)
	s := loadSummary(t, vars, cli.ExitCompletedWithFailures, "load", second)
	require.Equal(t, schema.RefreshFailed, s.Details.LatestBenchmarks.Status)
	require.Equal(t, schema.StatusCompletedWithFailures, s.Status)
	require.Len(t, s.Failures, 1, "the retry's failure replaces the update's")
	require.Equal(t, "latest_benchmarks", s.Failures[0].Artifact)
	require.Contains(t, s.Failures[0].Reason, "refresh failed")
	require.Contains(t, s.Failures[0].Reason, "broken")
	require.Equal(t, int64(1), s.Rows.Benchmark.New, "the run's rows are committed")
	require.Equal(t, rowsOf(29000000500, 4, 8), latestRows(t, db), "the view still shows the older run")
	// The ledger keeps the outcome the report showed.
	r := run(t, vars, "report", "--run-id", "29000000600", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	stored := parseSummary(t, r.stdout)
	require.Equal(t, schema.RefreshFailed, stored.Details.LatestBenchmarks.Status)
	r = run(t, vars, "status")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "latest_benchmarks  STALE")
	require.Contains(t, r.stdout, "last refresh failed at")

	execSQL(t, db, `ALTER TABLE latest_benchmark_points DROP CONSTRAINT broken`)
	// A rerun changes nothing, yet retries the pending refresh.
	s = loadSummary(t, vars, cli.ExitOK, "load", second)
	require.Equal(t, int64(1), s.Rows.Benchmark.Duplicate)
	require.Equal(t, schema.RefreshRefreshed, s.Details.LatestBenchmarks.Status)
	require.Equal(t, rowsOf(29000000600, 16), latestRows(t, db))
	r = run(t, vars, "status", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var st struct {
		Views []schema.ViewState `json:"views"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Len(t, st.Views, 1)
	require.False(t, st.Views[0].Stale)
	require.Empty(t, st.Views[0].LastError)
	require.Equal(t, int64(1), st.Views[0].Rows, fmt.Sprint(st.Views[0]))
}
