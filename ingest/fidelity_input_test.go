package ingest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// Input is never rewritten silently (issue 12): a duplicate key, a NUL or
// invalid UTF-8 in a string, or an identity integer that is not a plain
// integer fails its row, named in the report with artifact, file and
// reason, counted as a failed row (never stale, duplicate or skipped); the
// other rows land. A plain decimal string is the integer it spells.
func TestInputIsNeverRewritten(t *testing.T) {
	t.Parallel()
	good := func(t *testing.T, dir string) {
		perJob(t, dir, "good4", benchRow(4, nil))
		perJob(t, dir, "good8", benchRow(8, nil))
	}
	// withRaw writes a row whose JSON text is edited after marshalling,
	// for what a map cannot express (a key twice, raw bytes).
	withRaw := func(name string, edit func(string) string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			body := edit(mustJSON(t, benchRow(16, nil)))
			writeFile(t, filepath.Join(dir, "bmk_"+name, "agg_"+name+".json"), body)
		}
	}
	for _, c := range []struct {
		name, artifact, reason string
		build                  func(t *testing.T, dir string)
	}{
		{"conc twice", "bmk_dup", `row 0: duplicate key "conc"`, withRaw("dup", func(s string) string {
			return strings.Replace(s, `"conc": 16,`, `"conc": 16, "conc": 4,`, 1)
		})},
		{"NUL in the model", "bmk_nul", `row 0: field "model": string holds a NUL`, withRaw("nul", func(s string) string {
			return strings.Replace(s, `"model": "Qwen/`, `"model": "Qwen\u0000/`, 1)
		})},
		{"invalid UTF-8 in the image", "bmk_utf", `row 0: field "image": invalid UTF-8`, withRaw("utf", func(s string) string {
			return strings.Replace(s, `"image": "lmsysorg`, "\"image\": \"lms\xffysorg", 1)
		})},
		{"conc with a space", "bmk_space", `row 0: conc: " 16" is not a positive integer`, func(t *testing.T, dir string) {
			perJob(t, dir, "space", benchRow(16, map[string]any{"conc": " 16"}))
		}},
		{"isl 8192.0 as a string", "bmk_isl", `row 0: isl: "8192.0" is not a positive integer`, func(t *testing.T, dir string) {
			perJob(t, dir, "isl", benchRow(16, map[string]any{"isl": "8192.0"}))
		}},
		{"tp 0x8", "bmk_tp", `row 0: tp: "0x8" is not a non-negative integer`, func(t *testing.T, dir string) {
			perJob(t, dir, "tp", benchRow(16, map[string]any{"tp": "0x8"}))
		}},
		// The same point as good4 spelled " 4": before, it was read as 4 and
		// counted as a stale attempt of good4's point.
		{"a stale-looking copy", "bmk_copy", `row 0: conc: " 4" is not a positive integer`, func(t *testing.T, dir string) {
			perJob(t, dir, "copy", benchRow(4, map[string]any{"conc": " 4"}))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			good(t, dir)
			c.build(t, dir)
			sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
			require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
			require.Equal(t, schema.Counts{New: 2, Failed: 1}, sum.Rows.Benchmark)
			require.Equal(t, 2, e.count(`SELECT count(*) FROM benchmark_results`))
			require.Equal(t, 0, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 16`))
			require.Len(t, sum.Failures, 1)
			f := sum.Failures[0]
			require.Equal(t, [4]string{string(schema.CategoryBenchmark), c.artifact, "agg_" + strings.TrimPrefix(c.artifact, "bmk_") + ".json", c.reason},
				[4]string{string(f.Category), f.Artifact, f.File, f.Reason})
		})
	}
}

// "conc": "16" is stored as the integer 16, the same point as 16: a rerun
// of the run with the number finds it a duplicate.
func TestDecimalStringIdentityIsTheInteger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "s16", benchRow(16, map[string]any{"conc": "16", "isl": "8192", "tp": "8"}))
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(43, 1)})
	require.Equal(t, schema.Counts{New: 1}, sum.Rows.Benchmark)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results WHERE conc = 16 AND isl = 8192`))

	again := t.TempDir()
	perJob(t, again, "s16", benchRow(16, nil))
	sum = e.mustIngest(again, ingest.Config{Run: RunID(43, 1)})
	require.Equal(t, schema.Counts{Duplicate: 1}, sum.Rows.Benchmark)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM benchmark_results`))
}
