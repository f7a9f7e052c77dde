package cli_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// childEnv makes the test binary run `ingest` itself, as cmd/ingest's main
// does (cli.SignalContext around cli.Main), so that tests can start real
// ingest processes, signal them and kill them without building the binary.
const childEnv = "INGEST_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ctx, stop := cli.SignalContext(context.Background())
		code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
		stop()
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m))
}

// worker is an `ingest` process.
type worker struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
}

// startWorker starts `ingest args…` as a process of its own.
func startWorker(t testing.TB, vars map[string]string, args ...string) *worker {
	t.Helper()
	w := &worker{cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	w.cmd.Env = append(os.Environ(), childEnv+"=1", "INGEST_LOG_FORMAT=json")
	for k, v := range archivetest.OfflineEnv {
		if _, named := vars[k]; !named {
			w.cmd.Env = append(w.cmd.Env, k+"="+v)
		}
	}
	for k, v := range vars {
		w.cmd.Env = append(w.cmd.Env, k+"="+v)
	}
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	require.NoError(t, w.cmd.Start())
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
	})
	return w
}

// exited reports whether the process has ended.
func (w *worker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// wait waits for the process and returns its exit code.
func (w *worker) wait(t testing.TB) int {
	t.Helper()
	<-w.done
	if w.err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, w.err, &exit)
	}
	return w.cmd.ProcessState.ExitCode()
}

const (
	backfillRuns     = 50
	backfillWorkflow = "run-sweep.yml"
)

// backfillFake serves backfillRuns completed runs of the sweep workflow on
// main, each with benchmark rows, evals with samples and a changelog (and
// every fifth with GPU telemetry), plus runs a backfill must leave alone:
// one in progress, one on another branch, one of another workflow. Run
// ids run against creation time, so the order of ingests shows that the
// queue serves the oldest run first. It returns the listed runs' ids,
// oldest first.
func backfillFake(t testing.TB) (*fakegithub.Server, []int64) {
	if testing.Short() {
		t.Skip("end to end through the fake GitHub: not under -short")
	}
	t.Helper()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	add := func(i int, id int64, mutate func(*fakegithub.Run)) {
		dir := t.TempDir()
		// Without a listing, the fake gives the artifacts ids of the run's
		// own (generated listings of different runs share ids).
		_, err := generate.Write(dir, generate.Options{Points: 6, Seed: int64(i + 1), RunID: id, Evals: 1, EvalDocs: 4,
			Telemetry: i%5 == 0, NoListing: true})
		require.NoError(t, err)
		run, err := fake.LoadTree(dir, id)
		require.NoError(t, err)
		run.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		run.RunStartedAt = run.CreatedAt.Add(time.Minute)
		run.Status, run.Conclusion, run.HeadBranch = "completed", "success", "main"
		run.Path, run.WorkflowID = ".github/workflows/"+backfillWorkflow, 4242
		if mutate != nil {
			mutate(&run)
		}
		fake.AddRun(run)
	}
	var ids []int64
	for i := range backfillRuns {
		id := int64(31000000000 + (backfillRuns-i)*1000)
		add(i, id, nil)
		ids = append(ids, id)
	}
	add(backfillRuns, 31000000001, func(r *fakegithub.Run) { r.Status, r.Conclusion = "in_progress", "" })
	add(backfillRuns+1, 31000000002, func(r *fakegithub.Run) { r.HeadBranch = "feature" })
	add(backfillRuns+2, 31000000003, func(r *fakegithub.Run) { r.Path, r.WorkflowID = ".github/workflows/e2e-tests.yml", 77 })
	return fake, ids
}

func backfillVars(fake *fakegithub.Server, db, cache string) map[string]string {
	v := runVars(fake, db, cache)
	v["INGEST_BACKFILL_WORKFLOW"] = backfillWorkflow
	return v
}

// ledgerRuns returns the run of every ledger row in ledger order, after
// checking that each row is a successful ingest.
func ledgerRuns(t *testing.T, db string) []int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), `SELECT github_run_id, status FROM ingests ORDER BY id`)
	require.NoError(t, err)
	var runs []int64
	for rows.Next() {
		var id int64
		var status string
		require.NoError(t, rows.Scan(&id, &status))
		require.Equal(t, "succeeded", status, "run %d", id)
		runs = append(runs, id)
	}
	require.NoError(t, rows.Err())
	return runs
}

// requireEachOnce fails unless the ledger holds exactly one ingest of each
// run in want.
func requireEachOnce(t *testing.T, db string, want []int64) {
	t.Helper()
	got := ledgerRuns(t, db)
	slices.Sort(got)
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	require.Equal(t, sorted, got, "the ledger holds each run exactly once")
}

// TestBackfillFromGitHub is the acceptance: a backfill of 50 runs
// from the fake GitHub ingests each once, oldest first; a worker killed
// midway leaves nothing half-written and a second run finishes the rest
// without ingesting any run again; three concurrent workers ingest each
// run once; and all three databases hold exactly the same rows.
func TestBackfillFromGitHub(t *testing.T) {
	fake, ids := backfillFake(t)
	cache := t.TempDir()

	// One worker.
	single := pgtest.New(t)
	r := run(t, backfillVars(fake, single, cache), "backfill")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, fmt.Sprintf("This worker listed %d runs and queued %d.", backfillRuns, backfillRuns))
	require.Contains(t, r.stdout, fmt.Sprintf("It worked on %d runs", backfillRuns))
	require.Contains(t, r.stdout, fmt.Sprintf("The pass, every worker: %d runs: %d ingested, 0 skipped, 0 failed, 0 pending: finished.", backfillRuns, backfillRuns))
	require.Equal(t, ids, ledgerRuns(t, single), "one ingest per run, oldest run first")
	want := dumpNatural(t, single)
	require.Len(t, want["workflow_runs"], backfillRuns)
	require.NotEmpty(t, want["eval_samples"])
	require.NotEmpty(t, want["gpu_metric_samples"])
	require.DirExists(t, filepath.Join(cache, runTestRepo, "artifacts"), "the runs were downloaded through the cache")
	requireCacheEmptied(t, cache)

	// Again: the ledger has every run, so nothing is ingested.
	r = run(t, backfillVars(fake, single, cache), "backfill")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, fmt.Sprintf("queued 0 (and settled at once %d skipped", backfillRuns))
	require.Contains(t, r.stdout, "It worked on 0 runs")
	require.Len(t, ledgerRuns(t, single), backfillRuns)

	t.Run("killed midway, then resumed", func(t *testing.T) {
		db := pgtest.New(t)
		w := startWorker(t, backfillVars(fake, db, t.TempDir()), "backfill")
		waitFor(t, db, `SELECT count(*) >= 15 FROM backfill_runs WHERE state = 'ingested'`, w)
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
		w.wait(t)
		// Whatever the worker was doing when it died was rolled back.
		done := ledgerRuns(t, db)
		require.GreaterOrEqual(t, len(done), 15)
		require.Less(t, len(done), backfillRuns, "killed midway")
		require.Equal(t, ids[:len(done)], done)
		var pending int
		require.NoError(t, queryRow(t, db, `SELECT count(*) FROM backfill_runs WHERE state = 'pending'`, &pending))
		require.Equal(t, backfillRuns-len(done), pending)

		r := run(t, backfillVars(fake, db, t.TempDir()), "backfill")
		requireCode(t, cli.ExitOK, r)
		require.Contains(t, r.stdout, "Backfill pass #1 ", "the same pass resumed")
		require.Contains(t, r.stdout, fmt.Sprintf("It worked on %d runs", backfillRuns-len(done)))
		require.Equal(t, ids, ledgerRuns(t, db), "no run ingested twice, the rest oldest first")
		require.Equal(t, want, dumpNatural(t, db))
	})

	t.Run("three workers", func(t *testing.T) {
		db := pgtest.New(t)
		cache := t.TempDir()
		var workers []*worker
		for i := range 3 {
			vars := backfillVars(fake, db, cache)
			vars["INGEST_BACKFILL_WORKER"] = fmt.Sprintf("worker-%d", i+1)
			workers = append(workers, startWorker(t, vars, "backfill"))
		}
		for i, w := range workers {
			require.Equal(t, cli.ExitOK, w.wait(t), "worker %d\nstdout:\n%s\nstderr:\n%s", i+1, w.stdout.String(), w.stderr.String())
		}
		requireEachOnce(t, db, ids)
		var passes, workersSeen int
		require.NoError(t, queryRow(t, db, `SELECT count(*) FROM backfills`, &passes))
		require.Equal(t, 1, passes, "the workers shared one pass")
		require.NoError(t, queryRow(t, db, `SELECT count(DISTINCT worker) FROM backfill_runs WHERE state = 'ingested'`, &workersSeen))
		require.GreaterOrEqual(t, workersSeen, 2, "the work was shared")
		require.Equal(t, want, dumpNatural(t, db))
	})
}

// waitFor polls cond (a boolean query) until it holds; it fails when the
// worker exits first or a minute passes.
func waitFor(t *testing.T, db, cond string, w *worker) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var ok bool
		if err := queryRow(t, db, cond, &ok); err == nil && ok {
			return
		}
		if w.exited() {
			t.Fatalf("the worker exited first\nstderr:\n%s", w.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s\nstderr:\n%s", cond, w.stderr.String())
}

func queryRow(t *testing.T, db, sql string, dst ...any) error {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	return conn.QueryRow(t.Context(), sql).Scan(dst...)
}

// requireCacheEmptied fails when a backfill left artifacts or run trees
// in the cache.
func requireCacheEmptied(t *testing.T, cache string) {
	t.Helper()
	var left []string
	require.NoError(t, filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return err
	}))
	require.Empty(t, left, "a backfill removes each run's downloads once it is settled")
}
