package cli_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

var updateStatus = flag.Bool("update-status", false, "rewrite the golden outputs of ingest status")

// TestStatusGolden: the ledger of a database that saw the demo run twice
// (new, then all duplicate), a backfill of two generated runs, and an
// aborted ingest, as `ingest status` shows it in each form. Times, which
// the ledger takes from the clock, are pinned before rendering.
func TestStatusGolden(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))

	trees := t.TempDir()
	for i, id := range []int64{28400000001, 28400000002} {
		_, err := generate.Write(filepath.Join(trees, "run"+string(rune('a'+i))), generate.Options{Points: 5, Seed: int64(i + 1), RunID: id})
		require.NoError(t, err)
	}
	requireCode(t, cli.ExitOK, run(t, vars, "backfill", "--from-dir", trees))

	st, err := store.Open(t.Context(), db, zap.NewNop())
	require.NoError(t, err)
	defer st.Close()
	start := schema.RunStart{Run: schema.RunIdentity{Repo: runTestRepo, SourceRunID: 28400000003, SourceRunAttempt: 2},
		Target: "production", StartedAt: time.Now()}
	sum := &schema.Summary{Status: schema.StatusAborted, FinishedAt: time.Now()}
	_, err = st.RecordAborted(t.Context(), start, sum, nil, errors.New("artifact results_bmk: read agg_bmk.json: unexpected EOF"))
	require.NoError(t, err)
	pinClock(t, db)

	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"status.txt", []string{"status"}},
		{"status_run.txt", []string{"status", "--run-id", "28485856738"}},
		{"status_limit.json", []string{"status", "--limit", "2", "--format", "json"}},
		{"status_unknown_run.txt", []string{"status", "--run-id", "1"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := run(t, vars, tc.args...)
			requireCode(t, cli.ExitOK, r)
			path := filepath.Join("testdata", tc.golden)
			if *updateStatus {
				require.NoError(t, os.WriteFile(path, []byte(r.stdout), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "golden file missing: go test ./ingest/cli -run TestStatusGolden -update-status")
			require.Equal(t, string(want), r.stdout)
		})
	}
}

// pinClock replaces every time the ledger and the backfill passes took
// from the clock with fixed ones, a minute apart in id order.
func pinClock(t *testing.T, db string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	for _, q := range []string{
		`UPDATE ingests SET started_at = timestamptz '2026-12-01 09:00:00+00' + id * interval '1 minute',
			tool_version = 'v1.0.0',
			duration_ms = CASE WHEN finished_at IS NULL THEN NULL ELSE 1000 + id * 250 END,
			finished_at = CASE WHEN finished_at IS NULL THEN NULL
				ELSE timestamptz '2026-12-01 09:00:00+00' + id * interval '1 minute' + (1000 + id * 250) * interval '1 millisecond' END`,
		`UPDATE backfills SET started_at = timestamptz '2026-12-01 08:30:00+00' + id * interval '1 hour',
			finished_at = CASE WHEN finished_at IS NULL THEN NULL ELSE timestamptz '2026-12-01 08:45:00+00' + id * interval '1 hour' END`,
		`UPDATE materialized_view_state SET refreshed_at = timestamptz '2026-12-01 10:00:00+00',
			last_attempt_at = timestamptz '2026-12-01 10:00:00+00', last_duration_ms = 12`,
		`UPDATE backfill_runs SET finished_at = timestamptz '2026-12-01 08:40:00+00', duration_ms = 500, worker = 'host:1'
			WHERE finished_at IS NOT NULL`,
	} {
		_, err := conn.Exec(t.Context(), q)
		require.NoError(t, err)
	}
}

// TestStatusUsage: bad options are usage errors, before any connection.
func TestStatusUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--limit", "0"}, `ingest status: invalid value "0" for --limit: want an integer from 1 to 10000`},
		{[]string{"status", "--limit", "x"}, `ingest status: invalid value "x" for --limit: want an integer from 1 to 10000`},
		{[]string{"status", "--run-id", "-4"}, `ingest status: invalid value "-4" for --run-id: want a positive integer`},
		{[]string{"status", "--format", "md"}, `ingest status: invalid value "md" for --format: want text|json`},
		{[]string{"status", "extra"}, `unexpected argument "extra"`},
	} {
		r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, tc.args...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, tc.want)
	}
}

// TestBackfillUsage: contradictory or malformed options are usage errors,
// found before any connection or request.
func TestBackfillUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs.txt")
	require.NoError(t, os.WriteFile(runs, []byte("123\n456 # a comment\n"), 0o644))
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("123\nabc\n"), 0o644))
	base := map[string]string{"DATABASE_URL": unreachableURL, "GITHUB_TOKEN": "t"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"backfill"}, nil, "--repo OWNER/NAME is required (or INGEST_REPO)"},
		{[]string{"backfill", "--repo", "no-slash"}, nil, `invalid value "no-slash" for --repo: want OWNER/NAME`},
		{[]string{"backfill", "--repo", "o/r", "--runs", runs, "--from-dir", dir}, nil, "--runs and --from-dir cannot be combined"},
		{[]string{"backfill", "--repo", "o/r", "--from-dir", dir, "--workflow", "x.yml"}, nil, "do not apply to --from-dir"},
		{[]string{"backfill", "--repo", "o/r", "--runs", runs, "--branch", "dev"}, nil, "do not apply to --runs"},
		{[]string{"backfill", "--repo", "o/r", "--from-dir", dir}, map[string]string{"INGEST_BACKFILL_BRANCH": "dev"}, "do not apply to --from-dir"},
		{[]string{"backfill", "--repo", "o/r", "--from-dir", filepath.Join(dir, "missing")}, nil, "is not a directory"},
		{[]string{"backfill", "--repo", "o/r", "--runs", bad}, nil, `bad.txt:2: "abc" is not a run id`},
		{[]string{"backfill", "--repo", "o/r", "--since", "yesterday"}, nil, `--since: "yesterday" is neither RFC 3339 nor YYYY-MM-DD`},
		{[]string{"backfill", "--repo", "o/r", "--since", "2026-05-02", "--until", "2026-05-01"}, nil, "--until is before --since"},
		{[]string{"backfill", "--repo", "o/r"}, map[string]string{"GITHUB_TOKEN": ""}, "GITHUB_TOKEN is required"},
		{[]string{"backfill", "--repo", "o/r", "--parallel", "100"}, nil, `ingest backfill: invalid value "100" for --parallel: want an integer from 1 to 64`},
	} {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		for k, v := range tc.env {
			vars[k] = v
		}
		r := run(t, vars, tc.args...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
}

// TestBackfillRefusedToken: a token the API refuses stops a --runs
// backfill with that error, instead of failing every run of the list.
func TestBackfillRefusedToken(t *testing.T) {
	fake, ids := backfillFake(t)
	db := pgtest.New(t)
	runs := filepath.Join(t.TempDir(), "runs.txt")
	require.NoError(t, os.WriteFile(runs, []byte(fmt.Sprintf("%d %d\n", ids[0], ids[1])), 0o644))
	vars := runVars(fake, db, t.TempDir())
	vars["GITHUB_TOKEN"] = "ghs_wrong"
	r := run(t, vars, "backfill", "--runs", runs)
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "401 Bad credentials")
	require.Zero(t, count(t, db, "backfill_runs"), "no run was queued as failed")
}
