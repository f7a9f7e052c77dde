package ingest_test

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// demoZip is the demo run's one benchmark zip, whose digest artifacts.json
// lists.
const demoZip = "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc512_b200-dgxc_06_recipe-341408ee19f26bfd"

// tamperZip rewrites the demo's benchmark zip with tput_per_gpu replaced by
// 99999: a zip that no longer matches its listed digest.
func tamperZip(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, demoZip+".zip")
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		body, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		before := string(body)
		after := replaceNumber(t, before, "tput_per_gpu", "99999")
		require.NotEqual(t, before, after)
		files[f.Name] = after
	}
	require.NoError(t, zr.Close())
	writeZip(t, path, files)
}

// replaceNumber replaces the number after "key": in a JSON text.
func replaceNumber(t *testing.T, body, key, value string) string {
	t.Helper()
	i := strings.Index(body, `"`+key+`":`)
	require.GreaterOrEqual(t, i, 0, key)
	j := i + len(key) + 3
	for j < len(body) && body[j] == ' ' {
		j++
	}
	k := j
	for k < len(body) && strings.ContainsRune("0123456789.eE+-", rune(body[k])) {
		k++
	}
	require.Greater(t, k, j, "a number after %s", key)
	return body[:j] + value + body[k:]
}

// An artifacts.json that exists but is not a regular file, is not JSON, is
// of the wrong shape or types, or does not validate aborts the ingest
// before anything is written: without it the zip digests would go
// unchecked (issue 12). The abort names the file and the reason; the
// ledger records it when the run is known without the listing.
func TestMalformedListingAbortsTheIngest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.mustIngest(demoTree(t), ingest.Config{})
	require.EqualValues(t, 12, base.Rows.Benchmark.New)
	ledger := func() int { return e.count(`SELECT count(*) FROM ingests`) }
	before := e.checksums(dataTables...)
	nLedger := ledger()

	listing := func(dir string) string { return filepath.Join(dir, "artifacts.json") }
	rewrite := func(body string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { writeFile(t, listing(dir), body) }
	}
	tests := []struct {
		name    string
		mutate  func(t *testing.T, dir string)
		wantErr string
	}{
		{"truncated", rewrite(`{"artifacts": [`), "artifacts.json: invalid JSON: unexpected EOF"},
		{"empty", rewrite(""), "artifacts.json: empty file"},
		{"artifacts not an array", rewrite(`{"total_count": 1, "artifacts": {"name": "x"}}`), `artifacts.json: "artifacts" is not an array`},
		{"wrong-typed id", rewrite(`{"artifacts": [{"id": "4867003101", "name": "changelog-metadata"}]}`),
			`artifacts.json: artifact 0: field "id": string where an integer is expected`},
		{"wrong-typed expired", rewrite(`[{"id": 1, "name": "changelog-metadata", "expired": "false"}]`),
			`artifacts.json: artifact 0: field "expired": string where true or false is expected`},
		{"wrong-typed run", rewrite(`{"artifacts": [], "run": {"id": 28485856738, "run_attempt": "1"}}`),
			`artifacts.json: listing object: field "run.run_attempt": string where an integer is expected`},
		{"entry without id", rewrite(`[{"name": "changelog-metadata"}]`), "artifacts.json: artifact 0: changelog-metadata: no id"},
		{"id listed twice", rewrite(`[{"id": 5, "name": "a"}, {"id": 5, "name": "b"}]`), "artifacts.json: artifact 1: b: id 5 is listed twice (also artifact 0)"},
		{"digest not sha256", rewrite(`[{"id": 5, "name": "a", "digest": "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"}]`),
			`artifacts.json: artifact 0: a: digest "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709" is not "sha256:" and 64 hex digits`},
		{"symbolic link", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "artifacts.json")
			require.NoError(t, os.Rename(listing(dir), outside))
			require.NoError(t, os.Symlink(outside, listing(dir)))
		}, "artifacts.json: not a regular file: symbolic link"},
		{"directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(listing(dir)))
			require.NoError(t, os.Mkdir(listing(dir), 0o755))
		}, "artifacts.json: not a regular file: directory"},
		{"named pipe", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(listing(dir)))
			require.NoError(t, syscall.Mkfifo(listing(dir), 0o644))
		}, "artifacts.json: not a regular file: named pipe"},
		{"tampered zip beside a truncated listing", func(t *testing.T, dir string) {
			tamperZip(t, dir)
			body, err := os.ReadFile(listing(dir))
			require.NoError(t, err)
			writeFile(t, listing(dir), string(body[:len(body)/2]))
		}, "artifacts.json: invalid JSON: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, known := range []bool{true, false} {
				dir := demoTree(t)
				tt.mutate(t, dir)
				var cfg ingest.Config
				if known {
					cfg.Run = RunID(demoRunID, 1)
				}
				sum, err := e.ingest(dir, cfg)
				require.EqualError(t, err, tt.wantErr, "known run id: %v", known)
				require.Equal(t, schema.StatusAborted, sum.Status)
				require.Equal(t, tt.wantErr, sum.AbortReason)
				require.Zero(t, sum.Rows.Benchmark.Total())
				require.Equal(t, before, e.checksums(dataTables...), "nothing is written")
				if known {
					nLedger++
					require.NotZero(t, sum.IngestID, "the abort is in the ledger")
					require.Equal(t, "aborted", e.ledgerStatus(sum.IngestID))
					var reason string
					require.NoError(t, e.pool().QueryRow(context.Background(),
						`SELECT error FROM ingests WHERE id = $1 AND github_run_id = $2 AND run_attempt = 1`, sum.IngestID, int64(demoRunID)).Scan(&reason))
					require.Equal(t, tt.wantErr, reason)
				} else {
					require.Zero(t, sum.IngestID, "an unknown run has no ledger row")
					require.NotContains(t, err.Error(), "no run id")
				}
				require.Equal(t, nLedger, ledger())
			}
		})
	}
	var tampered int
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT count(*) FROM benchmark_results WHERE metrics::text LIKE '%99999%'`).Scan(&tampered))
	require.Zero(t, tampered)
}

// The same tampered zip beside an intact listing fails its digest check:
// the listing is what keeps the tampered value out.
func TestTamperedZipFailsItsDigestWithTheListing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	tamperZip(t, dir)
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	// fixtures/DEMO.md: 12 new, 12 skipped, 2 unmapped, 1 failed. The
	// refused zip is one more failed item, and its point's aggregate row,
	// no longer covered by a per-job file, lands in its place.
	require.Equal(t, schema.Counts{New: 12, Skipped: 11, Unmapped: 2, Failed: 2}, sum.Rows.Benchmark)
	var found bool
	for _, f := range sum.Failures {
		if f.Artifact == demoZip && strings.Contains(f.Reason, "digest mismatch: listing says sha256:5a0041f9") {
			found = true
		}
	}
	require.True(t, found, "%+v", sum.Failures)
	var tampered int
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT count(*) FROM benchmark_results WHERE metrics::text LIKE '%99999%'`).Scan(&tampered))
	require.Zero(t, tampered)
}
