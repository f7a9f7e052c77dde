package ingest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// Reuse metadata without attempts does not force attempt 1: the source
// run's attempt comes from artifacts.json (docs: 1 only when nothing says).
func TestReuseWithoutAttemptKeepsTheTreeAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const source, merge = int64(25763435778), int64(25800000000)
	dir, m := evalTree(t, generate.Options{Points: 4, Seed: 21, RunID: source, Attempt: 2})
	writeFile(t, filepath.Join(dir, "reused-ingest-metadata", "reuse_source_run.json"),
		`{"source_run_id": 25763435778, "ingest_run_id": 25800000000}`)
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, source, sum.Run.SourceRunID)
	require.Equal(t, 2, sum.Run.SourceRunAttempt, "artifacts.json's attempt, not a default 1")
	require.Equal(t, merge, sum.Run.MergeRunID)
	require.Equal(t, 1, sum.Run.MergeRunAttempt, "nothing names the merge run's attempt")
	var attempt int
	require.NoError(t, e.pool().QueryRow(context.Background(), `SELECT run_attempt FROM workflow_runs WHERE github_run_id = $1`, source).Scan(&attempt))
	require.Equal(t, 2, attempt)
	require.EqualValues(t, m.Points, sum.Rows.Benchmark.New)
}

// The reuse file and its legacy copy must agree: when they name different
// runs the ingest aborts naming both, and nothing is written.
func TestReuseFilesThatDisagreeAbort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const source, merge = int64(25763435778), int64(25800000000)
	dir, _ := evalTree(t, generate.Options{Points: 3, Seed: 22, RunID: source, Attempt: 2})
	writeReuse(t, dir, source, merge, 2, 1)
	legacy := filepath.Join(dir, "reused-ingest-artifacts", "reused-ingest-metadata", "reuse_source_run.json")

	// The same runs in both: the ingest proceeds.
	writeFile(t, legacy, `{"source_run_id": "25763435778", "source_run_attempt": 2, "ingest_run_id": "25800000000", "ingest_run_attempt": 1}`)
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, merge, sum.Run.MergeRunID)

	writeFile(t, legacy, `{"source_run_id": "25763435778", "source_run_attempt": 2, "ingest_run_id": "99"}`)
	before := e.checksums(dataTables...)
	sum, err := e.ingest(dir, ingest.Config{})
	require.Error(t, err)
	require.Equal(t, schema.StatusAborted, sum.Status)
	require.ErrorContains(t, err, "reuse metadata: reused-ingest-metadata/reuse_source_run.json (source run 25763435778 attempt 2, merge run 25800000000 attempt 1)"+
		" and reused-ingest-artifacts/reused-ingest-metadata/reuse_source_run.json (source run 25763435778 attempt 2, merge run 99 attempt unset) disagree")
	require.Equal(t, before, e.checksums(dataTables...))
}
