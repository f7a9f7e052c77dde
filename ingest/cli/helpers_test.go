package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/schema"
)

// demoRunID is the run of the bundled demo tree (fixtures/DEMO.md).
const demoRunID = 28485856738

// unreachableURL names a server nobody listens on: a command that gets as
// far as connecting fails with ExitAborted, one that stops earlier never
// notices.
const unreachableURL = "postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=5"

// syncBuffer is a bytes.Buffer safe for the logger and the command to
// share: the pipeline may log from more than one goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// result is what one command line did.
type result struct {
	code   int
	stdout string
	stderr string
}

// String is the whole result, for failure messages.
func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout ---\n%s\n--- stderr ---\n%s", r.code, r.stdout, r.stderr)
}

// fakeEnv is an environment holding vars, offline unless vars name an
// archive or an emulator (archivetest.Offline): no test reaches Google
// Cloud Storage.
func fakeEnv(vars map[string]string) func(string) string {
	return archivetest.Offline(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
}

// run runs one command line in-process with the given environment.
func run(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	return runCtx(t.Context(), vars, args...)
}

func runCtx(ctx context.Context, vars map[string]string, args ...string) result {
	return runEnv(ctx, cli.Env{Getenv: fakeEnv(vars)}, args...)
}

// runEnv runs a command line in env, its output captured.
func runEnv(ctx context.Context, env cli.Env, args ...string) result {
	var stdout, stderr syncBuffer
	env.Stdout, env.Stderr = &stdout, &stderr
	code := cli.Main(ctx, args, env)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// quickRetry retries GitHub requests as often as the client's default
// policy, with a backoff of milliseconds instead of seconds: the number of
// attempts is what tests of GitHub failures check.
func quickRetry() github.RetryPolicy {
	return github.RetryPolicy{BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
}

// requireCode stops the test unless the command exited with want.
func requireCode(t *testing.T, want int, r result) {
	t.Helper()
	require.Equal(t, want, r.code, "unexpected exit code\n%s", r)
}

// count returns the number of rows of table in the database at dbURL.
func count(t testing.TB, dbURL, table string) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var n int64
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n))
	return n
}

// queryInt64s returns the single bigint column of a query's rows.
func queryInt64s(t *testing.T, dbURL, sql string, args ...any) []int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), sql, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	return out
}

// tableExists reports whether the database has the table.
func tableExists(t *testing.T, dbURL, table string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var exists bool
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists))
	return exists
}

// dbName is the database part of a connection URL.
func dbName(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	return strings.TrimPrefix(u.Path, "/")
}

// withDatabase is dbURL pointing at another database of the same server.
func withDatabase(t *testing.T, dbURL, name string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// genTree writes a generated run tree into a fresh directory.
func genTree(t *testing.T, opts generate.Options) (string, generate.Manifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := generate.Write(dir, opts)
	require.NoError(t, err)
	return dir, m
}

// truncateOnePerJobFile cuts the first JSON file of the first per-job
// artifact (by name) in half, so that it no longer parses, and returns its
// artifact's name.
func truncateOnePerJobFile(t *testing.T, dir string) string {
	t.Helper()
	arts, err := filepath.Glob(filepath.Join(dir, "bmk_*"))
	require.NoError(t, err)
	for _, a := range arts {
		files, err := filepath.Glob(filepath.Join(a, "*.json"))
		require.NoError(t, err)
		if len(files) == 0 {
			continue
		}
		data, err := os.ReadFile(files[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(files[0], data[:len(data)/2], 0o644))
		return filepath.Base(a)
	}
	t.Fatalf("no per-job JSON file under %s", dir)
	return ""
}

// parseSummary decodes a JSON report.
func parseSummary(t *testing.T, data string) schema.Summary {
	t.Helper()
	var s schema.Summary
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&s), "not a JSON summary:\n%s", data)
	require.False(t, dec.More(), "trailing data after the JSON summary:\n%s", data)
	return s
}

var (
	textBenchmarkRow = regexp.MustCompile(`(?m)^benchmark\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`)
	textStatsLine    = regexp.MustCompile(`(?m)^benchmarkFiles \d+,.*$`)
)

// textReport is what the tests read back from a text report.
type textReport struct {
	benchmark schema.Counts
	stats     map[string]int64
}

// parseText reads the benchmark row and the stats line of a text report.
func parseText(t *testing.T, out string) textReport {
	t.Helper()
	m := textBenchmarkRow.FindStringSubmatch(out)
	require.NotNil(t, m, "no benchmark row in the text report:\n%s", out)
	n := make([]int64, 5)
	for i := range n {
		v, err := strconv.ParseInt(m[i+1], 10, 64)
		require.NoError(t, err)
		n[i] = v
	}
	rep := textReport{
		benchmark: schema.Counts{New: n[0], Duplicate: n[1], Skipped: n[2], Unmapped: n[3], Failed: n[4]},
		stats:     map[string]int64{},
	}
	line := textStatsLine.FindString(out)
	require.NotEmpty(t, line, "no stats line in the text report:\n%s", out)
	for _, part := range strings.Split(line, ", ") {
		name, val, ok := strings.Cut(part, " ")
		require.True(t, ok, "stats item %q", part)
		v, err := strconv.ParseInt(val, 10, 64)
		require.NoError(t, err, "stats item %q", part)
		rep.stats[name] = v
	}
	return rep
}

// demoFirst and demoRerun are the counts fixtures/DEMO.md designs the demo
// run to report on a fresh database and on a rerun.
var (
	demoFirst = schema.Counts{New: 12, Duplicate: 0, Skipped: 12, Unmapped: 2, Failed: 1}
	demoRerun = schema.Counts{New: 0, Duplicate: 12, Skipped: 12, Unmapped: 2, Failed: 1}
)

// requireDemoStats checks the stats DEMO.md gives for either ingest; new
// and duplicate run stats depend on which one it is.
func requireDemoStats(t *testing.T, s schema.Stats, runStatsNew, runStatsDuplicate int64) {
	t.Helper()
	require.Equal(t, int64(17), s.BenchmarkFiles, "benchmarkFiles")
	require.Equal(t, int64(27), s.RawBenchmarkRows, "rawBenchmarkRows")
	require.Equal(t, int64(9), s.CoveredByPerJobFiles, "coveredByPerJobFiles")
	require.Equal(t, int64(2), s.FailedRunRows, "failedRunRows")
	require.Equal(t, runStatsNew, s.RunStatsNew, "runStatsNew")
	require.Equal(t, runStatsDuplicate, s.RunStatsDuplicate, "runStatsDuplicate")
}
