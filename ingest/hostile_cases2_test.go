package ingest_test

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hLoad runs `ingest load` on the case's tree with extra flags.
func hLoad(t *testing.T, c *hCtx, extra ...string) hResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	args := append([]string{"load", c.dir, "--database-url", c.db, "--summary-json", c.summary, "--log-level", "warn"}, extra...)
	return hCLI(ctx, nil, args...)
}

// hTelemetry rewrites line n of the first gpu_metrics_ artifact's CSV
// through edit (a folder, or a zip whose new digest is listed).
func hTelemetryEdit(n int, edit func(line string) string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := hGlob(t, dir, "gpu_metrics_*")
		if !strings.HasSuffix(p, ".zip") {
			csv := hGlob(t, p, "*.csv")
			data, err := os.ReadFile(csv)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(csv, hEditLines(t, data, n, edit), 0o644))
			return
		}
		name := strings.TrimSuffix(filepath.Base(p), ".zip")
		hEditZip(t, dir, name, false, func(files map[string][]byte) {
			for f, b := range files {
				if strings.HasSuffix(f, ".csv") {
					files[f] = hEditLines(t, b, n, edit)
					return
				}
			}
			t.Fatalf("no CSV in %s", name)
		})
	}
}

// hTelemetry sets field i of line n of the telemetry CSV to v.
func hTelemetry(n, i int, v string) func(t *testing.T, dir string) {
	return hTelemetryEdit(n, func(l string) string { return hCSVField(l, i, v) })
}

// hNoNonFinite checks that no real column of the samples holds a
// non-finite value.
func hNoNonFinite(t *testing.T, c *hCtx) {
	t.Helper()
	require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM gpu_metric_samples s
		WHERE EXISTS (SELECT 1 FROM jsonb_each(to_jsonb(s)) e WHERE e.value::text IN ('"Infinity"', '"-Infinity"', '"NaN"'))`))
}

// telemetryCases: decision 3, every value fits its column.
func telemetryCases() []hCase {
	tel := func(name, input string, n, i int, v, header string) hCase {
		raw := strings.Fields(v)[0]
		return hCase{name: name, input: input, base: baseGen, mutate: hTelemetry(n, i, v), exit: 3,
			want: []string{"gpu_metrics_", fmt.Sprintf("line %d: field %s out of range (%s", n, header, raw)},
			check: func(t *testing.T, c *hCtx) {
				hNoNonFinite(t, c)
				require.NotNil(t, c.sum)
				hRequireFailure(t, c.sum, "gpu_metrics_", "gpu_metrics", fmt.Sprintf("line %d: field %s out of range", n, header))
			}}
	}
	// Already refused before issue 12, with a domain check more specific
	// than the column range: the series fails, the other one lands.
	domain := func(name, input string, n, i int, v, reason string) hCase {
		return hCase{name: name, input: input, base: baseGen, mutate: hTelemetry(n, i, v), exit: 3,
			want: []string{"gpu_metrics_", fmt.Sprintf("gpu_metrics.csv: line %d: %s", n, reason)},
			check: func(t *testing.T, c *hCtx) {
				hNoNonFinite(t, c)
				require.Equal(t, hCounts(1, 0, 0, 0, 1), c.sum.Rows.Power)
			}}
	}
	return []hCase{
		tel("telemetry-temp-1e39", "gpu_metrics.csv temperature.gpu 1e39 (just over float32)", 3, 3, "1e39", "temperature.gpu"),
		tel("telemetry-sm-clock-1e308", "gpu_metrics.csv clocks.current.sm 1e308 MHz (overflows real)", 2, 4, "1e308 MHz", "clocks.current.sm [MHz]"),
		tel("telemetry-mem-clock-neg-1e39", "gpu_metrics.csv clocks.current.memory -1e39 MHz", 4, 5, "-1e39 MHz", "clocks.current.memory [MHz]"),
		tel("telemetry-util-1e400", "gpu_metrics.csv utilization.gpu 1e400 %", 2, 6, "1e400 %", "utilization.gpu [%]"),
		tel("telemetry-temp-nan", "gpu_metrics.csv temperature.gpu NaN", 2, 3, "NaN", "temperature.gpu"),
		domain("telemetry-power-1e308", "gpu_metrics.csv power.draw 1e308 W", 2, 2, "1e308 W", "impossible power 1e+308 W"),
		domain("telemetry-power-nan", "gpu_metrics.csv power.draw NaN W", 2, 2, "NaN W", `non-finite power "NaN W"`),
		domain("telemetry-index-70000", "gpu_metrics.csv index 70000 (overflows smallint)", 2, 1, "70000", `invalid GPU index "70000"`),
		{name: "telemetry-wrong-field-count", input: "gpu_metrics.csv line 2 with a field missing", base: baseGen,
			mutate: hTelemetryEdit(2, func(l string) string { return l[:strings.LastIndex(l, ",")] }),
			exit:   3, want: []string{"gpu_metrics_", "gpu_metrics.csv: line 2: row has 7 fields, the header 8"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(1, 0, 0, 0, 1), c.sum.Rows.Power) }},
	}
}

// nonFiniteCases: NaN, Inf and 1e400 in benchmark metrics and eval scores.
func nonFiniteCases() []hCase {
	row := func(name, input string, mutate func(t *testing.T, dir string), want ...string) hCase {
		return hCase{name: name, input: input, base: baseBench, mutate: mutate, exit: 3,
			want: append([]string{"bmk_bad / agg_bad.json: "}, want...), check: hBenchPartial}
	}
	score := func(name, input, v, want string) hCase {
		return hCase{name: name, input: input, base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/results_*.json")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				re := regexp.MustCompile(`"exact_match,strict-match": [0-9.]+`)
				require.True(t, re.Match(data))
				require.NoError(t, os.WriteFile(p, re.ReplaceAll(data, []byte(`"exact_match,strict-match": `+v)), 0o644))
			},
			want: []string{"eval_", "results_", want},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 1, c.sum.Rows.Eval.Failed)
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM eval_results WHERE metrics::text ~ '(NaN|Infinity|e\\+?[0-9]{3})'`))
			}}
	}
	return []hCase{
		row("metric-nan", "tput_per_gpu: NaN (bare)", hBad(`{"hw": "b200", "conc": 16, "tput_per_gpu": NaN}`), "non-finite number NaN"),
		row("metric-1e400", "tput_per_gpu: 1e400", hBadRow(func(r string) string {
			return strings.Replace(r, `"tput_per_gpu": 1016.5`, `"tput_per_gpu": 1e400`, 1)
		}), "tput_per_gpu"),
		row("metric-infinity-string", `tput_per_gpu: "Infinity"`, hBadRowWith(map[string]any{"tput_per_gpu": "Infinity"}), "tput_per_gpu: non-finite"),
		row("metric-neg-infinity", "median_ttft: -Infinity (bare)", hBadRow(func(r string) string {
			return strings.Replace(r, `"median_ttft": 0.5`, `"median_ttft": -Infinity`, 1)
		}), "non-finite number -Infinity"),
		score("eval-score-nan", "eval score exact_match,strict-match: NaN", "NaN", "not an lm-eval results object"),
		score("eval-score-1e400", "eval score exact_match,strict-match: 1e400", "1e400", "exact_match,strict-match"),
	}
}

// hZipEntries writes a zip artifact whose entries are given with modes.
func hZipEntries(t *testing.T, path string, entries []hZipEntry) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = w.Write([]byte(e.body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

type hZipEntry struct {
	name string
	body string
	mode fs.FileMode
}

// hBigLine writes a JSON object file whose "model" string is size bytes
// long: one line, streamed so the test holds none of it in memory.
func hBigLine(t *testing.T, path string, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = w.WriteString(`{"hw": "b200", "conc": 16, "model": "`)
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("A", 1<<20))
	for n := int64(0); n < size; n += int64(len(chunk)) {
		_, err = w.Write(chunk)
		require.NoError(t, err)
	}
	_, err = w.WriteString(`"}`)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// sourceCases: the tree itself is hostile (already handled before issue 12).
func sourceCases() []hCase {
	row32 := mustJSONNoT(benchRow(32, nil))
	row16 := mustJSONNoT(benchRow(16, nil))
	zipCase := func(name, input string, entries []hZipEntry, file, reason string) hCase {
		return hCase{name: name, input: input, base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) { hZipEntries(t, filepath.Join(dir, "bmk_evil.zip"), entries) },
			want:   []string{"bmk_evil / " + file + ": " + reason},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 32`), "the hostile entry was not read")
				require.EqualValues(t, 1, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 16`), "the good entry landed")
				require.Equal(t, hCounts(3, 0, 0, 0, 1), c.sum.Rows.Benchmark)
			}}
	}
	return []hCase{
		zipCase("zip-slip", "zip entry ../evil.json beside a good one", []hZipEntry{{name: "../evil.json", body: row32}, {name: "agg_ok.json", body: row16}},
			"../evil.json", `".." path element`),
		zipCase("zip-slip-nested", "zip entry a/../../evil.json", []hZipEntry{{name: "a/../../evil.json", body: row32}, {name: "agg_ok.json", body: row16}},
			"a/../../evil.json", `".." path element`),
		zipCase("zip-absolute-path", "zip entry /etc/passwd", []hZipEntry{{name: "/etc/passwd", body: row32}, {name: "agg_ok.json", body: row16}},
			"/etc/passwd", "absolute path"),
		zipCase("zip-symlink-entry", "zip entry that is a symlink to /etc/passwd", []hZipEntry{{name: "agg_link.json", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}, {name: "agg_ok.json", body: row16}},
			"agg_link.json", "symbolic link rejected"),
		{name: "fifo-in-folder", input: "a named pipe agg_pipe.json inside a per-job folder", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				perJob(t, dir, "evil", benchRow(16, nil))
				require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "bmk_evil", "agg_pipe.json"), 0o644))
			}, want: []string{"bmk_evil / agg_pipe.json: not a regular file: named pipe"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(3, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "symlink-in-folder", input: "agg_link.json in a per-job folder, a symlink to a row outside the tree", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				perJob(t, dir, "evil", benchRow(16, nil))
				outside := filepath.Join(t.TempDir(), "row.json")
				writeFile(t, outside, row32)
				require.NoError(t, os.Symlink(outside, filepath.Join(dir, "bmk_evil", "agg_link.json")))
			}, want: []string{"bmk_evil / agg_link.json: symbolic link rejected"},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 32`))
				require.Equal(t, hCounts(3, 0, 0, 0, 1), c.sum.Rows.Benchmark)
			}},
		{name: "symlink-artifact", input: "bmk_link at the top of the tree, a symlink to a folder outside", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				outside := t.TempDir()
				writeFile(t, filepath.Join(outside, "agg_link.json"), row32)
				require.NoError(t, os.Symlink(outside, filepath.Join(dir, "bmk_link")))
			}, want: []string{"bmk_link: symbolic link rejected"},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 32`))
			}},
		{name: "zip-bomb-declared", input: "zip entry declaring 1 TiB uncompressed (holds 1 KiB)", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				f, err := os.Create(filepath.Join(dir, "bmk_bomb.zip"))
				require.NoError(t, err)
				zw := zip.NewWriter(f)
				body := []byte(strings.Repeat(" ", 1024))
				h := &zip.FileHeader{Name: "agg_bomb.json", Method: zip.Store, CRC32: crc32IEEE(body),
					CompressedSize64: uint64(len(body)), UncompressedSize64: 1 << 40}
				w, err := zw.CreateRaw(h)
				require.NoError(t, err)
				_, err = w.Write(body)
				require.NoError(t, err)
				require.NoError(t, zw.Close())
				require.NoError(t, f.Close())
			}, want: []string{"bmk_bomb"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "zip-bomb-expansion", input: "zip entry of 320 MB expanding from about 300 KB", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				f, err := os.Create(filepath.Join(dir, "bmk_bomb.zip"))
				require.NoError(t, err)
				zw := zip.NewWriter(f)
				w, err := zw.Create("agg_bomb.json")
				require.NoError(t, err)
				_, err = w.Write([]byte(`{"hw": "b200", "conc": 16, "model": "`))
				require.NoError(t, err)
				chunk := make([]byte, 1<<20)
				for i := range chunk {
					chunk[i] = 'A'
				}
				for range 320 {
					_, err = w.Write(chunk)
					require.NoError(t, err)
				}
				_, err = w.Write([]byte(`"}`))
				require.NoError(t, err)
				require.NoError(t, zw.Close())
				require.NoError(t, f.Close())
			}, want: []string{"bmk_bomb / agg_bomb.json: "},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "line-200mb-benchmark", input: "a per-job JSON file of one 200 MB line", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) { hBigLine(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), 200<<20) },
			want:   []string{"bmk_bad / agg_bad.json: "}, check: hBenchPartial},
		{name: "line-200mb-eval-sample", input: "eval samples line 2 of 200 MB", base: baseGen, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/samples_*.jsonl")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				lines := strings.SplitN(string(data), "\n", 2)
				big := filepath.Join(t.TempDir(), "big")
				hBigLine(t, big, 200<<20)
				bigData, err := os.ReadFile(big)
				require.NoError(t, err)
				out := append([]byte(lines[0]+"\n"), bigData...)
				out = append(out, '\n')
				out = append(out, lines[1]...)
				require.NoError(t, os.WriteFile(p, out, 0o644))
			}, want: []string{"samples_", "line 2: "},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Details.EvalSampleLinesFailed) }},
		{name: "nesting-100k", input: "a per-job row with arrays nested 100 000 deep", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				body := `{"hw": "b200", "conc": 16, "x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`
				writeFile(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), body)
			}, want: []string{"bmk_bad / agg_bad.json: "}, check: hBenchPartial},
		{name: "truncated-zip", input: "a per-job zip cut in half", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				path := filepath.Join(dir, "bmk_zip.zip")
				writeZip(t, path, map[string]string{"agg_zip.json": row16})
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o644))
			}, want: []string{"bmk_zip", "unreadable zip (truncated or corrupt)"},
			check: func(t *testing.T, c *hCtx) { require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark) }},
		{name: "truncated-tarball", input: "multinode_server_logs.tar.gz of the demo cut in half", base: baseDemo, exit: 3,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "multinode_server_logs_*/multinode_server_logs.tar.gz")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, data[:len(data)/2], 0o644))
			}, want: []string{"multinode_server_logs_", "multinode_server_logs.tar.gz: "}},
		{name: "zip-duplicate-entries", input: "a zip holding agg_dup.json twice (conc 16, then conc 32)", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) {
				hZipEntries(t, filepath.Join(dir, "bmk_evil.zip"), []hZipEntry{{name: "agg_dup.json", body: row16}, {name: "agg_dup.json", body: row32}})
			}, want: []string{"bmk_evil", "agg_dup.json"},
			check: func(t *testing.T, c *hCtx) {
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc IN (16, 32)`), "neither copy is trusted")
			}},
	}
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
