package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestOverridesApply: a run purged in the ledger after it was ingested is
// deleted from the stored data by `ingest overrides apply`, and the
// dashboard's latest_benchmarks goes back to the older run's line; a dry
// run says what it would delete and changes nothing; a second apply
// changes nothing and says so; both applies are in the ledger.
func TestOverridesApply(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	older := writeLineRun(t, lineRun{id: 29000000100, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8}})
	newer := writeLineRun(t, lineRun{id: 29000000200, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4, 8, 16}})
	loadSummary(t, vars, cli.ExitOK, "load", older)
	loadSummary(t, vars, cli.ExitOK, "load", newer)
	require.Equal(t, rowsOf(29000000200, 4, 8, 16), latestRows(t, db))

	ledger := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ledger, []byte(`{"purgedRuns":[{"runId":29000000200,"reason":"accidental merge"}]}`), 0o644))

	r := run(t, vars, "overrides", "apply", "--overrides", ledger, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "dry run: nothing was changed; applying would")
	require.Contains(t, r.stdout, "delete: 1 workflow runs, 3 benchmark rows,")
	require.Contains(t, r.stdout, "run overrides: run 29000000200 (every attempt) purged (accidental merge)")
	require.Equal(t, int64(5), count(t, db, "benchmark_results"), "a dry run deletes nothing")
	require.Zero(t, count(t, db, "override_applications"))

	r = run(t, vars, "overrides", "apply", "--overrides", ledger, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var out struct {
		Changed       bool  `json:"changed"`
		ApplicationID int64 `json:"applicationId"`
		Result        struct {
			WorkflowRunsDeleted  int64 `json:"workflowRunsDeleted"`
			BenchmarkRowsDeleted int64 `json:"benchmarkRowsDeleted"`
			RunStatsDeleted      int64 `json:"runStatsDeleted"`
			ChangelogDeleted     int64 `json:"changelogEntriesDeleted"`
		} `json:"result"`
		LatestBenchmarks struct {
			Status string `json:"status"`
		} `json:"latestBenchmarks"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.True(t, out.Changed)
	require.NotZero(t, out.ApplicationID)
	require.EqualValues(t, 1, out.Result.WorkflowRunsDeleted)
	require.EqualValues(t, 3, out.Result.BenchmarkRowsDeleted)
	require.EqualValues(t, 1, out.Result.ChangelogDeleted, "the run's fallback changelog entry")
	require.Equal(t, "refreshed", out.LatestBenchmarks.Status)
	require.Equal(t, rowsOf(29000000100, 4, 8), latestRows(t, db), "the older run's line is served again")
	require.Equal(t, int64(2), count(t, db, "benchmark_results"))

	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "the stored data already reflects the run overrides: nothing changed")
	require.Equal(t, int64(2), count(t, db, "override_applications"))

	// An ingest of the purged run writes nothing again.
	loadSummary(t, vars, cli.ExitOK, "load", newer, "--overrides", ledger)
	require.Equal(t, int64(2), count(t, db, "benchmark_results"))

	r = run(t, vars, "overrides", "list")
	requireCode(t, cli.ExitUsage, r)
}
