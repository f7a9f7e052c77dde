package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestDatabaseURLUnparseable: a --database-url that does not parse is a
// usage error of every database command, named by its flag (and the
// variable it came from), before anything connects; the string, which may
// hold a password, is not echoed.
func TestDatabaseURLUnparseable(t *testing.T) {
	t.Parallel()
	const bad = "postgres://ingest:s3cretpw@127.0.0.1:notaport/ingest"
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: 28400000101})
	for _, args := range [][]string{
		{"load", dir}, {"demo"}, {"demo", "--dry-run"}, {"run", "--run-id", "1"}, {"status"}, {"report", "--run-id", "1"},
		{"migrate", "up"}, {"export", "telemetry", "--run-id", "1", "--out", "x.parquet"}, {"backfill", "--repo", "o/r", "--from-dir", dir},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"GITHUB_TOKEN": "t"}
			r := run(t, vars, append(args, "--database-url", bad)...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, "--database-url: cannot parse the connection string (check its syntax)")
			require.NotContains(t, r.stderr, "s3cretpw")
			require.Empty(t, r.stdout)

			vars["DATABASE_URL"] = bad
			r = run(t, vars, args...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, "--database-url (from DATABASE_URL): cannot parse the connection string")
			require.NotContains(t, r.stderr, "s3cretpw")
		})
	}
}

// TestTimeoutOptionsValidated: --lock-timeout and --statement-timeout (and
// their variables) take durations; anything else is a usage error naming
// the option, before anything connects.
func TestTimeoutOptionsValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"no unit", []string{"--lock-timeout", "10"}, nil, `invalid value "10" for --lock-timeout: want a duration such as 90s, 10m or 1h`},
		{"negative", []string{"--statement-timeout", "-1s"}, nil, `invalid value "-1s" for --statement-timeout: -1s is negative`},
		{"below a millisecond", []string{"--statement-timeout", "10us"}, nil, `invalid value "10us" for --statement-timeout: 10µs is less than 1ms (0 means no limit)`},
		{"environment", nil, map[string]string{"INGEST_LOCK_TIMEOUT": "soon"}, `invalid value "soon" for --lock-timeout (from INGEST_LOCK_TIMEOUT): want a duration`},
		{"too long", nil, map[string]string{"INGEST_STATEMENT_TIMEOUT": "999h"}, `invalid value "999h" for --statement-timeout (from INGEST_STATEMENT_TIMEOUT): 999h is more than PostgreSQL's limit of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, cmd := range [][]string{{"status"}, {"migrate", "version"}, {"demo"}} {
				vars := map[string]string{"DATABASE_URL": unreachableURL}
				for k, v := range tt.vars {
					vars[k] = v
				}
				r := run(t, vars, append(cmd, tt.args...)...)
				requireCode(t, cli.ExitUsage, r)
				require.Contains(t, r.stderr, tt.want, "%v", cmd)
			}
		})
	}
}

// TestCommandHelpListsTimeouts: every database command documents both
// timeouts with their variables and defaults.
func TestCommandHelpListsTimeouts(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"load"}, {"run"}, {"demo"}, {"backfill"}, {"status"}, {"report"}, {"migrate", "up"}, {"export", "telemetry"}} {
		r := run(t, nil, append(cmd, "-h")...)
		requireCode(t, cli.ExitOK, r)
		require.Regexp(t, `--lock-timeout duration +.*\(env INGEST_LOCK_TIMEOUT\) \(default 10m\)`, r.stdout, "%v", cmd)
		require.Regexp(t, `--statement-timeout duration +.*\(env INGEST_STATEMENT_TIMEOUT\) \(default 30m\)`, r.stdout, "%v", cmd)
	}
}

// holdRunLock opens a session named app holding the advisory lock of run
// runID (the key the ingest uses) and returns its pid and a release.
func holdRunLock(t *testing.T, dbURL, app string, runID int64) (int32, func()) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	require.NoError(t, err)
	cfg.RuntimeParams["application_name"] = app
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	require.NoError(t, err)
	var pid int32
	require.NoError(t, conn.QueryRow(t.Context(),
		`SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(`+store.RunLockKey+`)) l`, runID).Scan(&pid))
	done := false
	release := func() {
		if !done {
			done = true
			conn.Close(context.WithoutCancel(t.Context()))
		}
	}
	t.Cleanup(release)
	return pid, release
}

// ledgerRow is the newest ledger row of a run.
type ledgerRow struct {
	attempt int
	status  string
	reason  string
}

func newestLedgerRow(t *testing.T, dbURL string, runID int64) ledgerRow {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var r ledgerRow
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT run_attempt, status, coalesce(error, '') FROM ingests
		WHERE github_run_id = $1 ORDER BY id DESC LIMIT 1`, runID).Scan(&r.attempt, &r.status, &r.reason))
	return r
}

// TestLoadLockTimeout: another session holds the run's advisory lock; the
// ingest logs who holds it while it waits, then aborts after
// --lock-timeout with an error naming the lock and the holder, recorded in
// the ledger. The same through INGEST_LOCK_TIMEOUT.
func TestLoadLockTimeout(t *testing.T) {
	t.Parallel()
	const runID = 28400000111
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
	for _, tt := range []struct {
		name string
		args []string
		vars map[string]string
	}{
		{"flag", []string{"--lock-timeout", "2s"}, nil},
		{"environment", nil, map[string]string{"INGEST_LOCK_TIMEOUT": "2s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			pid, _ := holdRunLock(t, db, "lock-holder", runID)
			vars := map[string]string{"DATABASE_URL": db}
			for k, v := range tt.vars {
				vars[k] = v
			}
			began := time.Now()
			r := run(t, vars, append([]string{"load", dir}, tt.args...)...)
			took := time.Since(began)
			requireCode(t, cli.ExitAborted, r)
			want := fmt.Sprintf("timed out after 2s waiting for the advisory lock of run %d (held by pid %d, application lock-holder)", runID, pid)
			require.Contains(t, r.stderr, "ingest: aborted: "+want+"\n")
			require.Contains(t, r.stderr, fmt.Sprintf("waiting for the advisory lock of run %d (held by pid %d, application lock-holder)", runID, pid))
			require.GreaterOrEqual(t, took, 2*time.Second)
			require.Equal(t, ledgerRow{attempt: 1, status: "aborted", reason: want}, newestLedgerRow(t, db, runID))
			require.Zero(t, count(t, db, "benchmark_results"))
			require.Zero(t, count(t, db, "workflow_runs"))
		})
	}
}

// TestLoadStatementTimeoutNamesTheStatement: another session holds the
// run's workflow_runs row, so the ingest's upsert of it waits: the
// statement timeout strikes there and the error names that statement
// (not "set work_mem", the first statement of the batch it used to share).
func TestLoadStatementTimeoutNamesTheStatement(t *testing.T) {
	t.Parallel()
	const runID = 28400000121
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
	db := pgtest.New(t)
	requireCode(t, cli.ExitOK, run(t, nil, "load", dir, "--database-url", db))
	before := dumpTables(t, db)

	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	tx, err := conn.Begin(t.Context())
	require.NoError(t, err)
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	_, err = tx.Exec(t.Context(), `SELECT 1 FROM workflow_runs WHERE github_run_id = $1 FOR UPDATE`, runID)
	require.NoError(t, err)

	// The tree is unchanged, so a plain rerun is answered from the ledger,
	// whose row refers to the locked workflow run: that statement waits.
	r := run(t, nil, "load", dir, "--database-url", db, "--statement-timeout", "1500ms")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "ingest: aborted: statement timeout after 1.5s in record the unchanged rerun in the ledger\n")

	// Read in full, the rerun waits in its first write.
	r = run(t, nil, "load", dir, "--database-url", db, "--statement-timeout", "1500ms", "--reread")
	requireCode(t, cli.ExitAborted, r)
	want := fmt.Sprintf("statement timeout after 1.5s in write workflow run %d attempt 1", runID)
	require.Contains(t, r.stderr, "ingest: aborted: "+want+"\n")
	require.NotContains(t, r.stderr, "work_mem")
	require.Equal(t, ledgerRow{attempt: 1, status: "aborted", reason: want}, newestLedgerRow(t, db, runID))

	r = run(t, nil, "load", dir, "--database-url", db, "--lock-timeout", "1s", "--reread")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, fmt.Sprintf("ingest: aborted: lock timeout after 1s in write workflow run %d attempt 1\n", runID))
	require.NoError(t, tx.Rollback(t.Context()))
	require.Equal(t, before, dumpTables(t, db), "the aborted ingests changed data")
}

// TestIngestSessionsNameThemselves: while an ingest runs (here: waits for
// its run's lock), pg_stat_activity shows its session as
// application_name=ingest.
func TestIngestSessionsNameThemselves(t *testing.T) {
	t.Parallel()
	const runID = 28400000131
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
	db := pgtest.New(t)
	_, release := holdRunLock(t, db, "lock-holder", runID)
	done := make(chan result, 1)
	go func() { done <- runCtx(context.WithoutCancel(t.Context()), nil, "load", dir, "--database-url", db) }()

	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var apps []string
	require.Eventually(t, func() bool {
		rows, err := conn.Query(t.Context(), `SELECT application_name FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'`)
		require.NoError(t, err)
		apps, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return len(apps) > 0
	}, 20*time.Second, 50*time.Millisecond, "the ingest never waited for the lock")
	require.Equal(t, []string{"ingest"}, apps)
	release()
	r := <-done
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, fmt.Sprintf("got the advisory lock of run %d", runID))
}

// publicTables lists the tables of the database's public schema.
func publicTables(t *testing.T, dbURL string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), `SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

// TestDryRunNeverMigrates: a dry run against a database that is not
// migrated refuses, and leaves it without a table (ingest_schema_migrations
// included); against one migrated partway, it names both versions.
func TestDryRunNeverMigrates(t *testing.T) {
	t.Parallel()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000141})
	fake, _ := demoFake(t)
	for _, args := range [][]string{
		{"load", dir, "--dry-run"},
		{"demo", "--dry-run"},
		{"run", "--run-id", "28485856738", "--dry-run"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			vars := runVars(fake, db, t.TempDir())
			r := run(t, vars, args...)
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stderr, fmt.Sprintf(`ingest: the database is not migrated (schema version 0, this binary needs %d): `+
				`a dry run changes nothing, so it does not migrate; run "ingest migrate up" first`+"\n", latest))
			require.Empty(t, publicTables(t, db), "the dry run created tables")
			require.Empty(t, r.stdout)
		})
	}
	t.Run("partway", func(t *testing.T) {
		t.Parallel()
		db := migratedBefore5(t)
		before := publicTables(t, db)
		r := run(t, nil, "load", dir, "--dry-run", "--database-url", db)
		requireCode(t, cli.ExitAborted, r)
		require.Contains(t, r.stderr, fmt.Sprintf("the database is not migrated (schema version %d, this binary needs %d)", 4, latest))
		require.Equal(t, before, publicTables(t, db))
	})
}

// TestDemoDryRunMissingDatabase: demo --dry-run never creates its
// database: it refuses one that does not exist.
func TestDemoDryRunMissingDatabase(t *testing.T) {
	t.Parallel()
	name := pgtest.Name(t, "missing")
	db := withDatabase(t, pgtest.AdminURL(), name)
	pgtest.DropAtCleanup(t, name)
	r := run(t, nil, "demo", "--dry-run", "--database-url", db)
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, fmt.Sprintf(`ingest: the database %q does not exist: a dry run changes nothing, so it does not create it; `+
		`run "ingest demo" without --dry-run to create and migrate it`+"\n", name))
	admin, err := pgx.Connect(t.Context(), pgtest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(context.WithoutCancel(t.Context()))
	var exists bool
	require.NoError(t, admin.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists))
	require.False(t, exists, "demo --dry-run created the database")
}

// TestDryRunLogsNoIngestID: the ledger row of a dry run is rolled back, so
// its log names no ingest id; a real ingest's does.
func TestDryRunLogsNoIngestID(t *testing.T) {
	t.Parallel()
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: 28400000151})
	db := pgtest.New(t)
	r := run(t, nil, "load", dir, "--dry-run", "--database-url", db, "--log-format", "json")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, `"msg":"ingest finished"`)
	require.NotContains(t, r.stderr, "ingest_id")
	require.Contains(t, r.stderr, `"dry_run":true`)
	require.Zero(t, count(t, db, "ingests"))

	r = run(t, nil, "load", dir, "--database-url", db, "--log-format", "json")
	requireCode(t, cli.ExitOK, r)
	ids := queryInt64s(t, db, `SELECT id FROM ingests`)
	require.Len(t, ids, 1)
	require.Contains(t, r.stderr, fmt.Sprintf(`"ingest_id":%d`, ids[0]))
}

// TestRunFetchFailureIsRecorded: `ingest run` opens (and migrates) the
// database before it fetches, so a GitHub failure is an aborted ingest in
// the ledger with the run id, the attempt when GitHub said it, and the
// reason; a dry run records nothing.
func TestRunFetchFailureIsRecorded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fault       fakegithub.Fault
		wantAttempt int
		wantReason  string
	}{
		{"401 on the run", fakegithub.Fault{Route: fakegithub.RouteRun, Kind: fakegithub.Status, Status: 401, Message: "Bad credentials"},
			0, "401 Bad credentials"},
		// Retried until the client gives up (quickRetry: the default
		// attempts, a backoff of milliseconds).
		{"500 on a download", fakegithub.Fault{Route: fakegithub.RouteDownload, Kind: fakegithub.Status, Status: 500, Message: "Server Error"},
			2, "gave up after 6 attempts: unexpected status code: 500 Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake, _ := demoFake(t)
			fake.Inject(tt.fault)
			db := pgtest.NewEmpty(t) // migrated by the run before the fetch
			r := runEnv(t.Context(), cli.Env{Getenv: fakeEnv(runVars(fake, db, t.TempDir())), Retry: quickRetry()},
				"run", "--run-id", "28485856738", "--format", "json")
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stderr, "ingest: aborted: fetch run 28485856738: ")
			require.Contains(t, r.stderr, tt.wantReason)
			row := newestLedgerRow(t, db, 28485856738)
			require.Equal(t, "aborted", row.status)
			require.Equal(t, tt.wantAttempt, row.attempt)
			require.True(t, strings.HasPrefix(row.reason, "fetch run 28485856738: "), row.reason)
			require.Contains(t, row.reason, tt.wantReason)
			require.NotContains(t, row.reason, runTestToken)
			s := parseSummary(t, r.stdout)
			require.Equal(t, "aborted", string(s.Status))
			// The summary's reason is the ledger's on one line, cut at 300
			// characters (the download's artifact name makes it longer).
			require.True(t, strings.HasPrefix(row.reason, strings.TrimSuffix(s.AbortReason, "…")), "summary %q, ledger %q", s.AbortReason, row.reason)
			require.Contains(t, s.AbortReason, "fetch run 28485856738: ")
			require.Equal(t, queryInt64s(t, db, `SELECT id FROM ingests`), []int64{s.IngestID})
			require.Zero(t, count(t, db, "workflow_runs"))

			dry := pgtest.New(t)
			r = runEnv(t.Context(), cli.Env{Getenv: fakeEnv(runVars(fake, dry, t.TempDir())), Retry: quickRetry()},
				"run", "--run-id", "28485856738", "--dry-run")
			requireCode(t, cli.ExitAborted, r)
			require.Zero(t, count(t, dry, "ingests"), "a dry run recorded its abort")
		})
	}
}

// TestCancelledIngestIsReportedAsCancelled: a SIGTERM (a context cancelled
// with its cause) while the ingest waits for its run's lock, or while
// `ingest run` downloads, aborts with "cancelled (SIGTERM)", printed and
// recorded, never the effect ("use of closed network connection").
func TestCancelledIngestIsReportedAsCancelled(t *testing.T) {
	t.Parallel()
	sigterm := &cli.CancelledError{Signal: "SIGTERM"}
	t.Run("load waiting for the lock", func(t *testing.T) {
		t.Parallel()
		const runID = 28400000161
		dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
		db := pgtest.New(t)
		holdRunLock(t, db, "lock-holder", runID)
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		time.AfterFunc(time.Second, func() { cancel(sigterm) })
		r := runCtx(ctx, map[string]string{"DATABASE_URL": db}, "load", dir)
		requireCode(t, cli.ExitAborted, r)
		require.Contains(t, r.stderr, "ingest: aborted: cancelled (SIGTERM)\n")
		require.NotContains(t, r.stderr, "closed network connection")
		require.Equal(t, ledgerRow{attempt: 1, status: "aborted", reason: "cancelled (SIGTERM)"}, newestLedgerRow(t, db, runID))
	})
	t.Run("run downloading", func(t *testing.T) {
		t.Parallel()
		fake, _ := demoFake(t)
		fake.Inject(fakegithub.Fault{Route: fakegithub.RouteBlob, Kind: fakegithub.Hang})
		db := pgtest.New(t)
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		go func() {
			for fake.Count(fakegithub.RouteBlob) == 0 && ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			cancel(&cli.CancelledError{Signal: "SIGINT"})
		}()
		r := runCtx(ctx, runVars(fake, db, t.TempDir()), "run", "--run-id", "28485856738")
		requireCode(t, cli.ExitAborted, r)
		require.Contains(t, r.stderr, "ingest: aborted: cancelled (SIGINT)\n")
		require.NotContains(t, r.stderr, "closed network connection")
		require.Equal(t, ledgerRow{attempt: 2, status: "aborted", reason: "cancelled (SIGINT)"}, newestLedgerRow(t, db, 28485856738))
	})
}
