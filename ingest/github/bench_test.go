package github_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// benchPoints makes a generated run of about 2000 artifacts (per-job
// folders for ~93 % of the points, plus the aggregates).
const benchPoints = 2170

// BenchmarkDownloadAndIngest runs `ingest run` end to end against the fake
// GitHub serving a generated run of about 2000 artifacts: list (21 pages),
// download every zip through the 302 redirect, verify size and sha256,
// lay out the tree, ingest into a fresh database, post the comment. Each
// iteration does it twice: with a cold cache, then with the warm cache
// (into another fresh database, so only the downloads differ). It reports
// both times.
//
//	go test ./ingest/github/ -run '^$' -bench DownloadAndIngest -benchtime 3x
func BenchmarkDownloadAndIngest(b *testing.B) {
	tree := b.TempDir()
	m, err := generate.Write(tree, generate.Options{Points: benchPoints, Seed: 1, Retries: benchPoints / 100})
	require.NoError(b, err)
	fake := fakegithub.New(b, testRepo, testToken)
	run, err := fake.LoadTree(tree, 0)
	require.NoError(b, err)
	entries, err := os.ReadDir(tree)
	require.NoError(b, err)
	b.Logf("run %d: %d artifacts, %d points", run.ID, len(entries)-1, m.Points)

	var cold, warm time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cache := b.TempDir()
		dbCold, dbWarm := pgtest.New(b), pgtest.New(b)
		b.StartTimer()
		cold += ingestRun(b, fake, cache, dbCold, run.ID)
		warm += ingestRun(b, fake, cache, dbWarm, run.ID)
	}
	b.ReportMetric(cold.Seconds()/float64(b.N), "cold-s/op")
	b.ReportMetric(warm.Seconds()/float64(b.N), "warm-s/op")
}

func ingestRun(b *testing.B, fake *fakegithub.Server, cache, db string, runID int64) time.Duration {
	var stdout, stderr bytes.Buffer
	vars := map[string]string{"GITHUB_TOKEN": testToken, "GITHUB_API_URL": fake.BaseURL(), "INGEST_CACHE_DIR": cache,
		"DATABASE_URL": db, "INGEST_REPO": testRepo, "INGEST_LOG_LEVEL": "warn"}
	started := time.Now()
	code := cli.Main(context.Background(), []string{"run", "--run-id", strconv.FormatInt(runID, 10), "--pr", "1", "--format", "json"},
		cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: archivetest.Offline(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })})
	took := time.Since(started)
	require.Equal(b, cli.ExitOK, code, stderr.String())
	return took
}
