package ingest_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// shapeCases: malformed and wrongly shaped input, missing identity,
// unknown hardware.
func shapeCases() []hCase {
	row := func(name, input string, mutate func(t *testing.T, dir string), want ...string) hCase {
		return hCase{name: name, input: input, base: baseBench, mutate: mutate, exit: 3,
			want: append([]string{"bmk_bad / agg_bad.json: "}, want...), check: hBenchPartial}
	}
	return []hCase{
		row("malformed-json", "a per-job file cut inside a value", hBad(`{"hw": "b200", "conc": `), "unexpected end of file"),
		row("empty-file", "a per-job file of 0 bytes", hBad(""), "empty file"),
		{name: "per-job-array", input: "a per-job file holding a JSON array of one row (read like an aggregate)", base: baseBench, exit: 0,
			mutate: hBad("[" + mustJSONNoT(benchRow(16, nil)) + "]"), check: hBenchAccepted},
		row("per-job-string", `a per-job file holding "hello"`, hBad(`"hello"`), "not an object"),
		row("missing-conc", `a row without "conc"`, hBadRowWith(map[string]any{"conc": nil}), "conc"),
		{name: "missing-hw", input: `a row without "hw" (counted unmapped, not stored)`, base: baseBench, exit: 0,
			mutate: hBadRowWith(map[string]any{"hw": nil}), want: []string{"unmapped hardware: (empty)"},
			check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hCounts(2, 0, 0, 1, 0), c.sum.Rows.Benchmark)
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 16`))
			}},
		{name: "missing-model-prefix", input: `a row without "infmax_model_prefix" (the model resolves from "model")`, base: baseBench, exit: 0,
			mutate: hBadRowWith(map[string]any{"infmax_model_prefix": nil}), check: hBenchAccepted},
		{name: "missing-precision", input: `a row without "precision" (counted unmapped, not stored)`, base: baseBench, exit: 0,
			mutate: hBadRowWith(map[string]any{"precision": nil}), want: []string{"unmapped precision: (empty)"},
			check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hCounts(2, 0, 0, 1, 0), c.sum.Rows.Benchmark)
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 16`))
			}},
		row("metric-wrong-type", `tput_per_gpu: "fast"`, hBadRowWith(map[string]any{"tput_per_gpu": "fast"}), "tput_per_gpu"),
		row("trailing-garbage", "a per-job row followed by a second JSON value", hBad(mustJSONNoT(benchRow(16, nil))+` {"conc": 32}`), ""),
		{name: "aggregate-not-array", input: "results_bmk/agg_bmk.json holding one object", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), mustJSONNoT(benchRow(16, nil)))
			}, want: []string{"results_bmk / agg_bmk.json: ", "not a JSON array"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "aggregate-row-number", input: "results_bmk/agg_bmk.json: [1, row]", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), `[1, `+mustJSONNoT(benchRow(16, nil))+`]`)
			}, want: []string{"results_bmk / agg_bmk.json: ", "row 0: not an object (number)"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(3, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "unknown-hardware", input: `a row with "hw": "z999" (no GPU key)`, base: baseBench, exit: 0,
			mutate: hBadRowWith(map[string]any{"hw": "z999"}), want: []string{"unmapped hardware: z999"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(2, 0, 0, 1, 0), c.sum.Rows.Benchmark) }},
		{name: "eval-samples-torn-last-line", input: "eval samples file whose last line is cut in half", base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/samples_*.jsonl")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				s := strings.TrimSuffix(string(data), "\n")
				last := strings.LastIndex(s, "\n")
				require.NoError(t, os.WriteFile(p, []byte(s[:last+1+(len(s)-last)/2]), 0o644))
			}, want: []string{"samples_", "line 8: "},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Details.EvalSampleLinesFailed) }},
		{name: "eval-results-truncated", input: "an eval results_*.json cut in half", base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/results_*.json")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, data[:len(data)/2], 0o644))
			}, want: []string{"eval_", "results_"},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Rows.Eval.Failed) }},
		{name: "run-stats-malformed", input: "run-stats/run_stats.json cut in half", base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "run-stats", "run_stats.json")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, data[:len(data)/2], 0o644))
			}, want: []string{"run-stats / run_stats.json: "},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM run_stats`))
			}},
	}
}

// agentxCases: decision 4, published metrics stay as published.
func agentxCases() []hCase {
	return []hCase{
		{name: "agentx-published-metric-kept", input: "demo run: AgentX conc 4 publishes gpu_cache_hit_rate 0.67837", base: baseDemo, exit: 3,
			check: func(t *testing.T, c *hCtx) {
				got := hQueryStrings(t, c.db, `SELECT coalesce(metrics->>'server_gpu_cache_hit_rate', 'absent') || ' ' || coalesce(metrics->>'derived_gpu_cache_hit_rate', 'absent')
					FROM benchmark_results WHERE benchmark_type = 'agentic_traces' AND conc = 4`)
				require.Len(t, got, 1)
				f := strings.Fields(got[0])
				require.Equal(t, "0.67837", f[0], "the published value, exactly")
				require.NotEqual(t, "absent", f[1], "the derived value is stored under its own name")
				require.NotEqual(t, f[0], f[1])
			}},
		{name: "agentx-derived-prefix-reserved", input: `a bmk_agentic_ row publishing "derived_gpu_cache_hit_rate"`, base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "bmk_agentic_*/*.json")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				s := string(data)
				i := strings.Index(s, "{")
				require.NoError(t, os.WriteFile(p, []byte(s[:i+1]+`"derived_gpu_cache_hit_rate": 0.5, `+s[i+1:]), 0o644))
			}, want: []string{"bmk_agentic_", "derived_gpu_cache_hit_rate"},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Rows.Benchmark.Failed) }},
	}
}

const (
	hRepo  = "SemiAnalysisAI/InferenceX"
	hToken = "ghs_HOSTILETOKEN_never_in_output_5d1e"
)

// hFake is a fake GitHub serving the generated base run.
type hFake struct {
	srv   *fakegithub.Server
	runID int64
	names []string
}

// hGitHubRun serves the generated base run from a fake GitHub, lets setup
// break it, and runs `ingest run` against it.
func hGitHubRun(t *testing.T, c *hCtx, setup func(f *hFake)) hResult {
	t.Helper()
	dir := t.TempDir()
	hGenTree(t, dir)
	srv := fakegithub.New(t, hRepo, hToken)
	run, err := srv.LoadTree(dir, 0)
	require.NoError(t, err)
	f := &hFake{srv: srv, runID: run.ID}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "artifacts.json" {
			f.names = append(f.names, strings.TrimSuffix(e.Name(), ".zip"))
		}
	}
	setup(f)
	vars := map[string]string{"GITHUB_TOKEN": hToken, "GITHUB_API_URL": srv.BaseURL(), "INGEST_CACHE_DIR": t.TempDir(),
		"DATABASE_URL": c.db, "INGEST_REPO": hRepo}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	return hCLI(ctx, vars, "run", "--run-id", strconv.FormatInt(run.ID, 10), "--no-comment", "--summary-json", c.summary, "--log-level", "warn")
}

// hAbortRow checks the ledger recorded the aborted attempt of the run.
func hAbortRow(t *testing.T, c *hCtx, runID int64, reason string) {
	t.Helper()
	got := hQueryStrings(t, c.db, `SELECT run_attempt::text || ' ' || coalesce(error, '') FROM ingests WHERE github_run_id = $1 AND status = 'aborted'`, runID)
	require.Len(t, got, 1, "one aborted ledger row for run %d", runID)
	require.Contains(t, got[0], reason)
}

// hAdminDB creates an empty (unmigrated) database, dropped when the test
// ends, and returns its URL.
func hAdminDB(t *testing.T, create bool) (string, string) {
	t.Helper()
	name := "ingest_hostile_" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatInt(hDBSeq.Add(1), 36)
	u, err := url.Parse(pgtest.AdminURL())
	require.NoError(t, err)
	u.Path = "/" + name
	admin, err := pgx.Connect(t.Context(), pgtest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(context.WithoutCancel(t.Context()))
	if create {
		_, err = admin.Exec(t.Context(), "CREATE DATABASE "+name)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		a, err := pgx.Connect(ctx, pgtest.AdminURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer a.Close(ctx)
		if _, err := a.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return u.String(), name
}

func hDatabaseExists(t *testing.T, name string) bool {
	t.Helper()
	return hQueryInt(t, pgtest.AdminURL(), `SELECT count(*) FROM pg_database WHERE datname = $1`, name) == 1
}

var hDBSeq atomic.Int64

var hIngestIDLog = regexp.MustCompile(`ingest_?[iI]d"?[:= ]+"?(\d+)`)

// processCases: decisions 7 to 9, locks, dry runs, usage, GitHub faults.
func processCases() []hCase {
	return []hCase{
		{name: "lock-held", input: "the run's advisory lock held by another session, --lock-timeout 1s", base: baseBench, aborted: true, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				conn, err := pgx.Connect(t.Context(), c.db)
				require.NoError(t, err)
				defer conn.Close(context.WithoutCancel(t.Context()))
				tx, err := conn.Begin(t.Context())
				require.NoError(t, err)
				defer tx.Rollback(context.WithoutCancel(t.Context()))
				_, err = tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtextextended('ingest-run:' || $1::bigint, 0))`, hostileRunID)
				require.NoError(t, err)
				var sawApp atomic.Bool
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					watch, err := pgx.Connect(context.Background(), c.db)
					if err != nil {
						return
					}
					defer watch.Close(context.Background())
					for !sawApp.Load() {
						var n int
						if watch.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ingest'`).Scan(&n) == nil && n > 0 {
							sawApp.Store(true)
						}
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
						}
					}
				}()
				begin := time.Now()
				r := hLoad(t, c, "--run-id", strconv.Itoa(hostileRunID), "--lock-timeout", "1s")
				c.state["took"] = time.Since(begin)
				close(stop)
				<-done
				c.state["app"] = sawApp.Load()
				return r
			}, check: func(t *testing.T, c *hCtx) {
				require.Less(t, c.state["took"].(time.Duration), 30*time.Second, "the lock timeout bounds the wait")
				require.True(t, c.state["app"].(bool), "a connection with application_name=ingest was seen")
			}, want: []string{"timed out after 1s waiting for the advisory lock of run 42 (held by pid "}},
		{name: "statement-timeout", input: "benchmark_results locked by another session, --statement-timeout 1s", base: baseBench, aborted: true, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				conn, err := pgx.Connect(t.Context(), c.db)
				require.NoError(t, err)
				defer conn.Close(context.WithoutCancel(t.Context()))
				tx, err := conn.Begin(t.Context())
				require.NoError(t, err)
				defer tx.Rollback(context.WithoutCancel(t.Context()))
				_, err = tx.Exec(t.Context(), `LOCK TABLE benchmark_results IN ACCESS EXCLUSIVE MODE`)
				require.NoError(t, err)
				begin := time.Now()
				r := hLoad(t, c, "--run-id", strconv.Itoa(hostileRunID), "--lock-timeout", "1m", "--statement-timeout", "1s")
				c.state["took"] = time.Since(begin)
				return r
			}, check: func(t *testing.T, c *hCtx) {
				require.Less(t, c.state["took"].(time.Duration), 30*time.Second, "the statement timeout bounds the wait")
			}, want: []string{"statement timeout after 1s in "}, absent: []string{"set work_mem"}},
		{name: "lock-timeout-not-a-duration", input: "--lock-timeout soon", base: baseBench, exit: 2, aborted: true,
			args: []string{"--lock-timeout", "soon"}, want: []string{"--lock-timeout"}},
		{name: "dry-run-unmigrated", input: "--dry-run against an empty, unmigrated database", base: baseBench, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				empty, _ := hAdminDB(t, true)
				c.state["url"] = empty
				return hCLI(t.Context(), nil, "load", c.dir, "--run-id", "42", "--dry-run", "--database-url", empty, "--log-level", "warn")
			}, check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.state["url"].(string), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`), "a dry run created tables")
			}, want: []string{"the database is not migrated (schema version", `a dry run changes nothing, so it does not migrate; run "ingest migrate up" first`}},
		{name: "demo-dry-run-missing-db", input: "demo --dry-run against a database that does not exist", base: baseNone, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				missing, name := hAdminDB(t, false)
				c.state["name"] = name
				return hCLI(t.Context(), nil, "demo", "--dry-run", "--database-url", missing, "--log-level", "warn")
			}, check: func(t *testing.T, c *hCtx) {
				require.False(t, hDatabaseExists(t, c.state["name"].(string)), "a dry run created the database")
			}, want: []string{`does not exist: a dry run changes nothing, so it does not create it`}},
		{name: "database-url-unparseable", input: "--database-url 'postgres://%zz'", base: baseBench, exit: 2,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hCLI(t.Context(), nil, "load", c.dir, "--run-id", "42", "--database-url", "postgres://%zz")
			}, want: []string{"--database-url"}},
		{name: "dry-run-no-phantom-id", input: "--dry-run on a migrated database: no ledger row, no ingest id in the log", base: baseBench, exit: 0, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				c.state["ingests"] = hQueryInt(t, c.db, `SELECT count(*) FROM ingests`)
				return hLoad(t, c, "--run-id", "42", "--dry-run", "--log-level", "info")
			}, check: func(t *testing.T, c *hCtx) {
				require.Equal(t, c.state["ingests"], hQueryInt(t, c.db, `SELECT count(*) FROM ingests`), "a dry run left a ledger row")
				for _, m := range hIngestIDLog.FindAllStringSubmatch(c.res.output(), -1) {
					require.EqualValues(t, 1, hQueryInt(t, c.db, `SELECT count(*) FROM ingests WHERE id = $1::bigint`, m[1]), "the log names ingest %s, which does not exist", m[1])
				}
			}},
		{name: "sigterm-while-waiting", input: "`ingest load` process sent SIGTERM while it waits for the run's advisory lock", base: baseBench, exit: 1, aborted: true,
			exec: hSigterm, want: []string{"cancelled (SIGTERM)"}, absent: []string{"use of closed network connection"},
			check: func(t *testing.T, c *hCtx) { hAbortRow(t, c, hostileRunID, "cancelled (SIGTERM)") }},
		{name: "github-401", input: "`ingest run`: GitHub answers 401 to the artifact listing", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRun(t, c, func(f *hFake) {
					c.state["run"] = f.runID
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.Status, Status: 401, Message: "Bad credentials"})
				})
			}, want: []string{"401"}, check: func(t *testing.T, c *hCtx) { hAbortRow(t, c, c.state["run"].(int64), "401") }},
		{name: "github-500", input: "`ingest run`: GitHub answers 500 to every artifact download", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRun(t, c, func(f *hFake) {
					c.state["run"] = f.runID
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Kind: fakegithub.Status, Status: 500, Message: "boom"})
				})
			}, want: []string{"500"}, check: func(t *testing.T, c *hCtx) { hAbortRow(t, c, c.state["run"].(int64), "500") }},
	}
}

// hBinDir is where the suite builds the ingest binary for the one case
// that needs a real process (a signal); TestHostile sets it.
var (
	hBinDir  string
	hBinOnce sync.Once
	hBinPath string
	hBinErr  error
)

// hBinary builds cmd/ingest once per test process.
func hBinary(t *testing.T) string {
	t.Helper()
	hBinOnce.Do(func() {
		hBinPath = filepath.Join(hBinDir, "ingest")
		out, err := exec.Command("go", "build", "-o", hBinPath, "github.com/inferencex/ingest/cmd/ingest").CombinedOutput()
		if err != nil {
			hBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, hBinErr)
	return hBinPath
}

// hSigterm starts `ingest load` as a process while another session holds
// the run's advisory lock, waits until the process waits for it, and
// sends SIGTERM.
func hSigterm(t *testing.T, c *hCtx) hResult {
	t.Helper()
	bin := hBinary(t)
	conn, err := pgx.Connect(t.Context(), c.db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	tx, err := conn.Begin(t.Context())
	require.NoError(t, err)
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	_, err = tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtextextended('ingest-run:' || $1::bigint, 0))`, hostileRunID)
	require.NoError(t, err)

	var stdout, stderr hLockedBuffer
	cmd := exec.Command(bin, "load", c.dir, "--run-id", strconv.Itoa(hostileRunID), "--database-url", c.db,
		"--summary-json", c.summary, "--log-level", "info", "--log-format", "console")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A separate session: inside the lock holder's transaction the
	// statistics views are a snapshot.
	watch, err := pgx.Connect(t.Context(), c.db)
	require.NoError(t, err)
	defer watch.Close(context.WithoutCancel(t.Context()))
	waiting := false
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && !waiting; {
		var n int
		require.NoError(t, watch.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&n))
		waiting = n > 0
		if !waiting {
			select {
			case err := <-exited:
				return hResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String() + fmt.Sprintf("\n(exited before waiting for the lock: %v)", err)}
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if !waiting {
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the ingest never waited for the advisory lock\n--- stdout ---\n%s\n--- stderr ---\n%s", stdout.String(), stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the ingest did not stop within 30 s of SIGTERM\n%s", stderr.String())
	}
	return hResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}
