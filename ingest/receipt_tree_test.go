package ingest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// executionRecord is a point's execution record as a receipt-prepared
// artifact holds it beside agg.json.
func executionRecord(t *testing.T, conc int) string {
	return mustJSON(t, map[string]any{"schema_version": 1, "point_id": strings.Repeat("ab", 32), "execution_id": "exec-1",
		"bundle_digest": strings.Repeat("cd", 32), "mode": "throughput", "client_exit_code": 0, "concurrency": conc,
		"source":         map[string]any{"repository": "SemiAnalysisAI/InferenceX", "run_id": 42, "attempt": 1, "head_sha": strings.Repeat("e", 40)},
		"native_receipt": map[string]any{"state": "COMPLETED", "manifest_sha256": strings.Repeat("ef", 32), "job_id": "123"}})
}

// writeReceipt writes receipt.json at the top of dir listing every file of
// the named artifacts with its sha256 and size, sealed with receipt_id =
// sha256 of the rest (encoding/json: sorted keys, no whitespace).
func writeReceipt(t *testing.T, dir string, artifacts ...string) {
	t.Helper()
	var arts, points []any
	for i, name := range artifacts {
		var members []any
		require.NoError(t, filepath.WalkDir(filepath.Join(dir, name), func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			if d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, err := filepath.Rel(filepath.Join(dir, name), p)
			require.NoError(t, err)
			sum := sha256.Sum256(data)
			members = append(members, map[string]any{"path": filepath.ToSlash(rel), "sha256": hex.EncodeToString(sum[:]), "size": len(data)})
			return nil
		}))
		arts = append(arts, map[string]any{"id": i + 1, "name": name, "sha256": strings.Repeat("00", 32), "run_id": "42", "members": members})
		points = append(points, map[string]any{"point_id": strings.Repeat("ab", 32), "execution_artifact_id": i + 1,
			"execution_path": "execution.json", "normalized_artifact_id": i + 1, "normalized_path": "agg.json"})
	}
	doc := map[string]any{"kind": "source-measurement-receipt", "version": 1, "repository": "SemiAnalysisAI/InferenceX",
		"source_run_id": "42", "source_attempt": 1, "points": points, "artifacts": arts}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	doc["receipt_id"] = hex.EncodeToString(sum[:])
	writeFile(t, filepath.Join(dir, "receipt.json"), mustJSON(t, doc))
}

// A receipt-prepared tree (agg.json beside execution.json, receipt.json at
// the top) is green: the execution record is evidence, never a row, and
// receipt.json is no stray file. The receipt's members are verified: a
// changed file, a missing one or one the receipt does not list is a run
// failure naming artifact and file; an unreadable receipt is one naming
// receipt.json. Nothing requires a receipt.
func TestReceiptPreparedTree(t *testing.T) {
	t.Parallel()
	build := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "bmk_rcpt4", "agg.json"), mustJSON(t, benchRow(4, nil)))
		writeFile(t, filepath.Join(dir, "bmk_rcpt4", "execution.json"), executionRecord(t, 4))
		writeFile(t, filepath.Join(dir, "bmk_rcpt8", "agg.json"), mustJSON(t, benchRow(8, nil)))
		writeFile(t, filepath.Join(dir, "bmk_rcpt8", "execution.json"), executionRecord(t, 8))
		return dir
	}
	type fail struct{ artifact, file, reason string }
	for _, c := range []struct {
		name     string
		edit     func(t *testing.T, dir string)
		members  int64
		receipts int64
		failures []fail
	}{
		{"verified", func(t *testing.T, dir string) { writeReceipt(t, dir, "bmk_rcpt4", "bmk_rcpt8") }, 4, 1, nil},
		{"no receipt", func(t *testing.T, dir string) {}, 0, 0, nil},
		{"a member changed after the receipt", func(t *testing.T, dir string) {
			writeReceipt(t, dir, "bmk_rcpt4", "bmk_rcpt8")
			writeFile(t, filepath.Join(dir, "bmk_rcpt8", "execution.json"), executionRecord(t, 16))
		}, 4, 1, []fail{{"bmk_rcpt8", "execution.json", "digest mismatch: sha256 "}}},
		{"a member missing, a file not listed", func(t *testing.T, dir string) {
			writeReceipt(t, dir, "bmk_rcpt4", "bmk_rcpt8")
			require.NoError(t, os.Rename(filepath.Join(dir, "bmk_rcpt4", "execution.json"), filepath.Join(dir, "bmk_rcpt4", "exec.json.bak")))
		}, 4, 1, []fail{
			{"bmk_rcpt4", "exec.json.bak", "not a member of the artifact in receipt.json"},
			{"bmk_rcpt4", "execution.json", "member of receipt.json missing from the artifact: "},
		}},
		{"an unreadable receipt", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "receipt.json"), `{"kind": "source-measurement-receipt", "version": 1`)
		}, 0, 0, []fail{{"", "receipt.json", "not JSON: unexpected end of JSON input"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := build(t)
			c.edit(t, dir)
			sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
			require.Equal(t, schema.Counts{New: 2}, sum.Rows.Benchmark, "execution.json is no benchmark row")
			require.EqualValues(t, 2, sum.Stats.RawBenchmarkRows)
			execs := int64(2)
			if strings.Contains(c.name, "missing") {
				execs = 1 // renamed away
			}
			require.Equal(t, execs, sum.Details.ExecutionRecords)
			require.Equal(t, c.receipts, sum.Details.Receipts)
			require.Equal(t, c.members, sum.Details.ReceiptMembers)
			var got []fail
			for _, f := range sum.Failures {
				require.Equal(t, schema.CategoryRun, f.Category)
				got = append(got, fail{f.Artifact, f.File, f.Reason})
			}
			require.Len(t, got, len(c.failures), "%v", got)
			for i, f := range c.failures {
				require.Equal(t, [2]string{f.artifact, f.file}, [2]string{got[i].artifact, got[i].file})
				require.True(t, strings.HasPrefix(got[i].reason, f.reason), got[i].reason)
			}
			if len(c.failures) == 0 {
				require.Equal(t, schema.StatusSucceeded, sum.Status)
			} else {
				require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
			}
		})
	}
}

// A bmk_* artifact whose JSON sits in a subfolder is read like the
// producer's collector reads it (every *.json, recursively); a file that is
// not JSON holds no rows and is counted and named in a note, never
// silently ignored.
func TestBenchmarkFilesInSubfoldersAreRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bmk_nested", "results", "agg_nested.json"), mustJSON(t, benchRow(4, nil)))
	writeFile(t, filepath.Join(dir, "bmk_nested", "results", "bench.log"), "done\n")
	perJob(t, dir, "flat", benchRow(8, nil))
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
	require.Equal(t, schema.StatusSucceeded, sum.Status, "%v", sum.Failures)
	require.Equal(t, schema.Counts{New: 2}, sum.Rows.Benchmark)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 4 AND source_file = 'results/agg_nested.json'`))
	require.EqualValues(t, 1, sum.Details.BenchmarkFilesNotRead)
	require.Contains(t, sum.Notes, "1 file of benchmark artifacts not read: not JSON, so no rows (bmk_nested/results/bench.log)")
}
