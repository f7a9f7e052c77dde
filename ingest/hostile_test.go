package ingest_test

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
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

	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// hostileCases is the issue 12 acceptance list: every hostile input the
// ingest must refuse, report or store exactly. Wordings are the lead's
// decisions (notes/issue12.md); cases whose fix is on another branch fail
// until it is merged.
func hostileCases() []hCase {
	var cs []hCase
	cs = append(cs, listingCases()...)
	cs = append(cs, outcomeCases()...)
	cs = append(cs, strictJSONCases()...)
	cs = append(cs, identityCases()...)
	cs = append(cs, telemetryCases()...)
	cs = append(cs, nonFiniteCases()...)
	cs = append(cs, sourceCases()...)
	cs = append(cs, shapeCases()...)
	cs = append(cs, agentxCases()...)
	cs = append(cs, processCases()...)
	cs = append(cs, trustCases()...)
	return cs
}

// hBad writes bmk_bad/agg_bad.json with a raw body.
func hBad(body string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), body)
	}
}

// hBadRow writes bmk_bad/agg_bad.json holding the conc 16 row with its
// JSON text edited by edit.
func hBadRow(edit func(row string) string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), edit(mustJSONNoT(benchRow(16, nil))))
	}
}

// hBadRowWith writes the conc 16 row with extra fields (nil deletes).
func hBadRowWith(extra map[string]any) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { perJob(t, dir, "bad", benchRow(16, extra)) }
}

// hBenchPartial checks a bench-base run where bmk_bad failed: the two good
// rows landed, the bad one counted failed, nothing else.
func hBenchPartial(t *testing.T, c *hCtx) {
	t.Helper()
	require.NotNil(t, c.sum, "no JSON summary")
	require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark)
	require.Equal(t, schema.StatusCompletedWithFailures, c.sum.Status)
	require.EqualValues(t, 2, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results`))
	require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 16`))
}

// hBenchAccepted checks a bench-base run where bmk_bad landed as conc 16.
func hBenchAccepted(t *testing.T, c *hCtx) {
	t.Helper()
	require.NotNil(t, c.sum, "no JSON summary")
	require.Equal(t, hCounts(3, 0, 0, 0, 0), c.sum.Rows.Benchmark)
	require.Equal(t, schema.StatusSucceeded, c.sum.Status)
	require.Zero(t, c.sum.Details.StaleAttemptRows)
	require.EqualValues(t, 1, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE conc = 16`))
}

// hTamperedZip turns the first fixed-seq artifact of a generated tree into
// a zip listed with its digest, then rewrites the zip with tput_per_gpu
// 99999 (the listing keeps the genuine digest).
func hTamperedZip(t *testing.T, dir string) string {
	t.Helper()
	name, file := hFixedSeqArtifact(t, dir)
	base := filepath.Base(file)
	hFolderToZip(t, dir, name, func(map[string][]byte) {})
	hEditZip(t, dir, name, true, func(files map[string][]byte) {
		var row map[string]any
		require.NoError(t, jsonUnmarshalNumber(files[base], &row))
		row["tput_per_gpu"] = 99999
		files[base] = []byte(mustJSONNoT(row))
	})
	return name
}

func hNo99999(t *testing.T, c *hCtx) {
	t.Helper()
	require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results WHERE (metrics->>'tput_per_gpu')::float8 = 99999`))
}

func hWriteListing(body string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "artifacts.json"), body) }
}

// listingCases: decision 5, a malformed artifacts.json aborts before
// anything is written.
func listingCases() []hCase {
	abort := func(name, input string, mutate func(t *testing.T, dir string), args []string, want ...string) hCase {
		return hCase{name: name, input: input, base: baseGen, mutate: mutate, args: args, exit: 1, aborted: true,
			want: append([]string{"artifacts.json: "}, want...), check: hNo99999}
	}
	withID := []string{"--run-id", "28485856738"}
	return []hCase{
		{name: "listing-truncated-tampered-zip", input: `artifacts.json cut to {"artifacts": [ and a zip rewritten with tput_per_gpu 99999, --run-id given`,
			base: baseGen, mutate: func(t *testing.T, dir string) {
				hTamperedZip(t, dir)
				hWriteListing(`{"artifacts": [`)(t, dir)
			}, args: withID, exit: 1, aborted: true, want: []string{"artifacts.json: "},
			check: func(t *testing.T, c *hCtx) {
				hNo99999(t, c)
				hAbortRow(t, c, 28485856738, "artifacts.json: ")
			}},
		{name: "listing-truncated-no-run-id", input: `artifacts.json cut to {"artifacts": [, no --run-id`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				hTamperedZip(t, dir)
				hWriteListing(`{"artifacts": [`)(t, dir)
			}, exit: 1, aborted: true, want: []string{"artifacts.json: "}, absent: []string{"no run id"}, check: hNo99999},
		abort("listing-artifacts-not-array", `"artifacts": {} (object, not array)`, hWriteListing(`{"total_count": 1, "artifacts": {}}`), withID),
		abort("listing-id-wrong-type", `artifact "id": "abc" (string)`, func(t *testing.T, dir string) {
			hListing(t, dir, func(doc map[string]any) { doc["artifacts"].([]any)[0].(map[string]any)["id"] = "abc" })
		}, nil),
		abort("listing-name-missing", `an artifact without "name"`, func(t *testing.T, dir string) {
			hListing(t, dir, func(doc map[string]any) { delete(doc["artifacts"].([]any)[1].(map[string]any), "name") })
		}, nil),
		abort("listing-duplicate-ids", "two listing entries with one id", func(t *testing.T, dir string) {
			hListing(t, dir, func(doc map[string]any) {
				arts := doc["artifacts"].([]any)
				dup := map[string]any{}
				for k, v := range arts[1].(map[string]any) {
					dup[k] = v
				}
				doc["artifacts"] = append(arts, dup)
			})
		}, nil, "is listed twice"),
		abort("listing-bad-digest", `digest "sha256:xyz"`, func(t *testing.T, dir string) {
			name, _ := hFixedSeqArtifact(t, dir)
			hFolderToZip(t, dir, name, func(map[string][]byte) {})
			hListing(t, dir, func(doc map[string]any) { hListingEntry(doc, name)["digest"] = "sha256:xyz" })
		}, nil, "digest"),
		abort("listing-is-directory", "artifacts.json is a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "artifacts.json")))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "artifacts.json"), 0o755))
		}, withID),
		abort("listing-is-symlink", "artifacts.json is a symlink to a listing outside the tree", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "listing.json")
			require.NoError(t, os.Rename(filepath.Join(dir, "artifacts.json"), outside))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "artifacts.json")))
		}, withID),
		abort("listing-empty-file", "artifacts.json of 0 bytes", hWriteListing(""), withID),
		abort("listing-duplicate-key", `"total_count" twice in artifacts.json`, func(t *testing.T, dir string) {
			hReplaceOnce(t, filepath.Join(dir, "artifacts.json"), `"total_count"`, `"total_count": 1, "total_count"`)
		}, nil, `duplicate key "total_count"`),
		abort("listing-top-level-number", "artifacts.json holds 42", hWriteListing("42"), withID),
		{name: "zip-digest-mismatch", input: "zip rewritten with tput_per_gpu 99999, listing keeps the genuine digest", base: baseGen,
			mutate: func(t *testing.T, dir string) { hTamperedZip(t, dir) }, exit: 3,
			want: []string{"digest mismatch"}, check: func(t *testing.T, c *hCtx) {
				hNo99999(t, c)
				require.NotNil(t, c.sum)
				require.EqualValues(t, 1, c.sum.Rows.Benchmark.Failed)
			}},
	}
}

// hExpireAll marks every benchmark artifact (per-job and aggregate)
// expired in the listing and removes it from the tree, as GitHub does
// after the retention period.
func hExpireAll(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	hListing(t, dir, func(doc map[string]any) {
		for _, a := range doc["artifacts"].([]any) {
			e := a.(map[string]any)
			n := e["name"].(string)
			if strings.HasPrefix(n, "bmk_") || n == "results_bmk" {
				e["expired"] = true
				names = append(names, n)
				require.NoError(t, os.RemoveAll(filepath.Join(dir, n)))
				require.NoError(t, os.RemoveAll(filepath.Join(dir, n+".zip")))
			}
		}
	})
	require.NotEmpty(t, names)
	return names
}

func hRequireDetail(t *testing.T, c *hCtx, key string, want float64) {
	t.Helper()
	v, ok := hDetail(t, c.summary, key)
	require.True(t, ok, "details.%s missing from the JSON summary", key)
	require.Equal(t, want, v, "details.%s", key)
}

// outcomeCases: decision 6, expired and missing artifacts and runs without
// benchmark data.
func outcomeCases() []hCase {
	noData := "⚠️ No benchmark data in this run: "
	return []hCase{
		{name: "all-benchmarks-expired", input: "every bmk_ artifact and results_bmk expired (listed, absent)", base: baseGen,
			mutate: func(t *testing.T, dir string) { hExpireAll(t, dir) }, exit: 3,
			want: []string{noData, "The rest was ingested into the "}, absent: []string{"✅"},
			check: func(t *testing.T, c *hCtx) {
				require.NotNil(t, c.sum)
				require.Equal(t, schema.StatusCompletedWithFailures, c.sum.Status)
				require.Zero(t, c.sum.Rows.Benchmark.New)
				hRequireDetail(t, c, "expiredArtifacts", 5) // 4 per-job + the aggregate
				require.EqualValues(t, 0, hQueryInt(t, c.db, `SELECT count(*) FROM benchmark_results`))
				require.EqualValues(t, 1, hQueryInt(t, c.db, `SELECT count(*) FROM eval_results`), "the rest was ingested")
			}},
		{name: "all-benchmarks-expired-dry-run", input: "every benchmark artifact expired, --dry-run", base: baseGen,
			mutate: func(t *testing.T, dir string) { hExpireAll(t, dir) }, args: []string{"--dry-run"}, exit: 3, aborted: true,
			want: []string{noData, "Nothing was written (dry run)."}, absent: []string{"✅"}},
		{name: "listed-but-missing", input: "a per-job artifact listed (not expired) but absent from the tree", base: baseGen,
			mutate: func(t *testing.T, dir string) {
				name, _ := hFixedSeqArtifact(t, dir)
				require.NoError(t, os.RemoveAll(filepath.Join(dir, name)))
			}, exit: 3, want: []string{": listed in artifacts.json but not in the tree"},
			check: func(t *testing.T, c *hCtx) {
				name, ok := hFixedSeqArtifactName(c)
				require.True(t, ok)
				require.Contains(t, c.res.output(), name+": listed in artifacts.json but not in the tree")
				hRequireDetail(t, c, "missingArtifacts", 1)
			}},
		{name: "one-artifact-expired", input: "one per-job artifact expired, the rest present", base: baseGen,
			mutate: func(t *testing.T, dir string) {
				name, _ := hFixedSeqArtifact(t, dir)
				require.NoError(t, os.RemoveAll(filepath.Join(dir, name)))
				hListing(t, dir, func(doc map[string]any) { hListingEntry(doc, name)["expired"] = true })
			}, exit: 0,
			check: func(t *testing.T, c *hCtx) {
				name, ok := hFixedSeqArtifactName(c)
				require.True(t, ok)
				require.Contains(t, strings.Join(c.sum.Notes, "\n"), name, "a note names the expired artifact")
				hRequireDetail(t, c, "expiredArtifacts", 1)
			}},
		{name: "no-benchmark-artifacts", input: "a run tree with evals, telemetry and changelog but no bmk_ artifact", base: baseGen,
			mutate: func(t *testing.T, dir string) {
				ms, _ := filepath.Glob(filepath.Join(dir, "bmk_*"))
				for _, m := range append(ms, filepath.Join(dir, "results_bmk")) {
					require.NoError(t, os.RemoveAll(m))
				}
				require.NoError(t, os.Remove(filepath.Join(dir, "artifacts.json")))
			}, args: []string{"--run-id", "28485856738"}, exit: 3, want: []string{noData, "The rest was ingested into the "}, absent: []string{"✅"}},
		{name: "all-benchmark-files-failed", input: "both per-job files of the run malformed", base: baseBench,
			mutate: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "bmk_good4", "agg_good4.json"), `{"hw": "b200", "conc": `)
				writeFile(t, filepath.Join(dir, "bmk_good8", "agg_good8.json"), `[`)
			}, exit: 3, want: []string{noData, "bmk_good4 / agg_good4.json: "}, absent: []string{"✅"},
			check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hCounts(0, 0, 0, 0, 2), c.sum.Rows.Benchmark)
			}},
		{name: "run-all-expired-github", input: "`ingest run`: GitHub lists every benchmark artifact expired", base: baseNone,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRun(t, c, func(f *hFake) {
					for _, n := range f.names {
						if strings.HasPrefix(n, "bmk_") || n == "results_bmk" {
							f.srv.SetExpired(f.runID, n, true)
						}
					}
				})
			}, exit: 3, want: []string{noData}, absent: []string{"✅"}},
	}
}

// hFixedSeqArtifactName is the fixed-seq per-job artifact the listing
// names but the tree lacks (the one the case removed).
func hFixedSeqArtifactName(c *hCtx) (string, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, "artifacts.json"))
	if err != nil {
		return "", false
	}
	var doc struct {
		Artifacts []struct {
			Name string `json:"name"`
		} `json:"artifacts"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return "", false
	}
	for _, a := range doc.Artifacts {
		if !strings.HasPrefix(a.Name, "bmk_") || strings.HasPrefix(a.Name, "bmk_agentic_") {
			continue
		}
		_, e1 := os.Stat(filepath.Join(c.dir, a.Name))
		_, e2 := os.Stat(filepath.Join(c.dir, a.Name+".zip"))
		if os.IsNotExist(e1) && os.IsNotExist(e2) {
			return a.Name, true
		}
	}
	return "", false
}

// strictJSONCases: decision 1, duplicate keys, NULs and invalid UTF-8 fail
// the row naming the field.
func strictJSONCases() []hCase {
	row := func(name, input string, mutate func(t *testing.T, dir string), want ...string) hCase {
		return hCase{name: name, input: input, base: baseBench, mutate: mutate, exit: 3,
			want: append([]string{"bmk_bad / agg_bad.json: "}, want...), check: hBenchPartial}
	}
	return []hCase{
		row("duplicate-key-conc", `"conc" twice in a per-job row`, hBadRow(func(r string) string {
			return strings.Replace(r, `"conc": 16`, `"conc": 16, "conc": 32`, 1)
		}), `duplicate key "conc"`),
		row("nul-escape-in-string", `"model" holding \u0000`, hBadRow(func(r string) string {
			return strings.Replace(r, `"Qwen/Qwen3.5`, `"Qwen/\u0000Qwen3.5`, 1)
		}), `field "model": string holds a NUL`),
		row("raw-nul-in-string", `"model" holding a raw NUL byte`, hBadRow(func(r string) string {
			return strings.Replace(r, `"Qwen/Qwen3.5`, "\"Qwen/\x00Qwen3.5", 1)
		}), `field "model": string holds a NUL`),
		row("invalid-utf8-in-string", `"model" holding byte 0xff`, hBadRow(func(r string) string {
			return strings.Replace(r, `"Qwen/Qwen3.5`, "\"Qwen/\xffQwen3.5", 1)
		}), `field "model": invalid UTF-8`),
		row("invalid-utf8-in-key", `a key holding bytes 0xc3 0x28`, hBadRow(func(r string) string {
			return strings.Replace(r, `"median_ttft"`, "\"median_\xc3\x28ttft\"", 1)
		}), `invalid UTF-8`),
		{name: "duplicate-key-aggregate", input: `"tp" twice in a results_bmk/agg_bmk.json row`, base: baseBench,
			mutate: func(t *testing.T, dir string) {
				r := strings.Replace(mustJSONNoT(benchRow(16, nil)), `"tp": 8`, `"tp": 8, "tp": 4`, 1)
				writeFile(t, filepath.Join(dir, "results_bmk", "agg_bmk.json"), "["+r+"]")
			}, exit: 3, want: []string{"results_bmk / agg_bmk.json: ", `row 0: duplicate key "tp"`},
			check: func(t *testing.T, c *hCtx) {
				require.Equal(t, hCounts(2, 0, 0, 0, 1), c.sum.Rows.Benchmark)
			}},
		{name: "duplicate-key-eval-results", input: `an eval score key twice in results_*.json`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				hReplaceOnce(t, hGlob(t, dir, "eval_*/results_*.json"), `"exact_match,strict-match": `, `"exact_match,strict-match": 0.1, "exact_match,strict-match": `)
			}, exit: 3, want: []string{`duplicate key "results.gsm8k.exact_match,strict-match"`, "results_"},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Rows.Eval.Failed) }},
		{name: "duplicate-key-eval-meta", input: `"conc" twice in an eval's meta_env.json`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				hReplaceOnce(t, hGlob(t, dir, "eval_*/meta_env.json"), `"conc": 4`, `"conc": 4, "conc": 8`)
			}, exit: 3, want: []string{"meta_env.json: ", `duplicate key "conc"`},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Rows.Eval.Failed) }},
		{name: "nul-in-eval-sample", input: `eval samples line 2 holding \u0000 in "filter"`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/samples_*.jsonl")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, hEditLines(t, data, 2, func(l string) string {
					require.Contains(t, l, `"filter": "`)
					return strings.Replace(l, `"filter": "`, `"filter": "\u0000`, 1)
				}), 0o644))
			}, exit: 3, want: []string{"samples_", `line 2: field "filter": string holds a NUL`},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Details.EvalSampleLinesFailed) }},
		{name: "invalid-utf8-in-eval-sample", input: `eval samples line 3 holding byte 0xfe in "filter"`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "eval_*/samples_*.jsonl")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, hEditLines(t, data, 3, func(l string) string {
					return strings.Replace(l, `"filter": "`, "\"filter\": \"\xfe", 1)
				}), 0o644))
			}, exit: 3, want: []string{"samples_", `line 3: field "filter": invalid UTF-8`},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Details.EvalSampleLinesFailed) }},
		{name: "duplicate-key-agentx-row", input: `"conc" twice in a bmk_agentic_ per-job row`, base: baseGen,
			mutate: func(t *testing.T, dir string) {
				p := hGlob(t, dir, "bmk_agentic_*/*.json")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				s := string(data)
				i := strings.Index(s, "{")
				require.NoError(t, os.WriteFile(p, []byte(s[:i+1]+`"conc": 999, `+s[i+1:]), 0o644))
			}, exit: 3, want: []string{"bmk_agentic_", `duplicate key "conc"`},
			check: func(t *testing.T, c *hCtx) { require.EqualValues(t, 1, c.sum.Rows.Benchmark.Failed) }},
	}
}

// identityCases: decision 2, identity integers are integers or plain
// decimal strings; anything else fails the row, never counted elsewhere.
func identityCases() []hCase {
	// tp, ep and the like may be 0 where a role is absent, so their
	// message may say "non-negative"; conc and isl never are.
	bad := func(name, input, field string, v any, raw string) hCase {
		kind := " is not a positive integer"
		if field == "tp" {
			kind = " is not a "
		}
		return hCase{name: name, input: input, base: baseBench, mutate: hBadRowWith(map[string]any{field: v}), exit: 3,
			want: []string{"bmk_bad / agg_bad.json: ", field + ": " + raw + kind}, check: hBenchPartial}
	}
	return []hCase{
		{name: "conc-decimal-string", input: `"conc": "16"`, base: baseBench, mutate: hBadRowWith(map[string]any{"conc": "16"}), exit: 0,
			check: hBenchAccepted},
		{name: "tp-decimal-string", input: `"tp": "8"`, base: baseBench, mutate: hBadRowWith(map[string]any{"tp": "8"}), exit: 0,
			check: func(t *testing.T, c *hCtx) {
				hBenchAccepted(t, c)
				require.EqualValues(t, 1, hQueryInt(t, c.db, `SELECT count(*) FROM configs`), "tp \"8\" is the same config as tp 8")
			}},
		bad("conc-leading-space", `"conc": " 16"`, "conc", " 16", `" 16"`),
		bad("conc-float-string", `"conc": "16.0"`, "conc", "16.0", `"16.0"`),
		bad("conc-hex-string", `"conc": "0x10"`, "conc", "0x10", `"0x10"`),
		bad("conc-fraction", `"conc": 16.5`, "conc", 16.5, `16.5`),
		bad("conc-negative", `"conc": -1`, "conc", -1, `-1`),
		bad("conc-empty-string", `"conc": ""`, "conc", "", `""`),
		bad("isl-fraction", `"isl": 8192.5`, "isl", 8192.5, `8192.5`),
		bad("tp-bool", `"tp": true`, "tp", true, `true`),
	}
}

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
				// The file fails as one power item; the run's other series lands.
				require.Equal(t, hCounts(1, 0, 0, 0, 1), c.sum.Rows.Power)
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
		tel("telemetry-sm-clock-1e308", "gpu_metrics.csv clocks.current.sm 1e308 MHz (overflows real)", 2, 4, "1e308 MHz", "clocks.current.sm"),
		tel("telemetry-mem-clock-neg-1e39", "gpu_metrics.csv clocks.current.memory -1e39 MHz", 4, 5, "-1e39 MHz", "clocks.current.memory"),
		tel("telemetry-util-1e400", "gpu_metrics.csv utilization.gpu 1e400 %", 2, 6, "1e400 %", "utilization.gpu"),
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
		{name: "zip-bomb-expansion", slow: true, input: "zip entry of 320 MB expanding from about 300 KB", base: baseBench, exit: 3,
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
		{name: "line-200mb-benchmark", slow: true, input: "a per-job JSON file of one 200 MB line", base: baseBench, exit: 3,
			mutate: func(t *testing.T, dir string) { hBigLine(t, filepath.Join(dir, "bmk_bad", "agg_bad.json"), 200<<20) },
			want:   []string{"bmk_bad / agg_bad.json: "}, check: hBenchPartial},
		{name: "line-200mb-eval-sample", slow: true, input: "eval samples line 2 of 200 MB", base: baseGen, exit: 3,
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
				// Issue 25: the served value is the one derived from the raw
				// export; the producer's stays, exactly, as published_<key>.
				got := hQueryStrings(t, c.db, `SELECT coalesce(metrics->>'published_server_gpu_cache_hit_rate', 'absent') || ' ' || coalesce(metrics->>'server_gpu_cache_hit_rate', 'absent')
					FROM benchmark_results WHERE benchmark_type = 'agentic_traces' AND conc = 4`)
				require.Len(t, got, 1)
				f := strings.Fields(got[0])
				require.Equal(t, "0.67837", f[0], "the published value, exactly")
				require.NotEqual(t, "absent", f[1], "the derived value is served")
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
	name := pgtest.Name(t, "hostile")
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

// hHoldInTx runs sql in a transaction of another session of the case's
// database and keeps it open, holding whatever sql locked, until release
// (the case's checks read the tables, so the caller releases first).
func hHoldInTx(t *testing.T, c *hCtx, sql string, args ...any) (release func()) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.db)
	require.NoError(t, err)
	release = func() { conn.Close(context.WithoutCancel(t.Context())) } // closing rolls back
	tx, err := conn.Begin(t.Context())
	if err != nil {
		release()
		require.NoError(t, err)
	}
	if _, err = tx.Exec(t.Context(), sql, args...); err != nil {
		release()
		require.NoError(t, err)
	}
	return release
}

func hDatabaseExists(t *testing.T, name string) bool {
	t.Helper()
	return hQueryInt(t, pgtest.AdminURL(), `SELECT count(*) FROM pg_database WHERE datname = $1`, name) == 1
}

var hIngestIDLog = regexp.MustCompile(`ingest_?[iI]d"?[:= ]+"?(\d+)`)

// processCases: decisions 7 to 9, locks, dry runs, usage, GitHub faults.
func processCases() []hCase {
	return []hCase{
		{name: "lock-held", input: "the run's advisory lock held by another session, --lock-timeout 1s", base: baseBench, aborted: true, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				defer hHoldInTx(t, c, `SELECT pg_advisory_xact_lock(`+store.RunLockKey+`)`, hostileRunID)()
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
				hAbortRow(t, c, hostileRunID, "timed out after 1s waiting for the advisory lock")
			}, want: []string{"timed out after 1s waiting for the advisory lock of run 42 (held by pid "}},
		{name: "statement-timeout", input: "benchmark_results locked by another session, --statement-timeout 1s", base: baseBench, aborted: true, exit: 1,
			exec: func(t *testing.T, c *hCtx) hResult {
				defer hHoldInTx(t, c, `LOCK TABLE benchmark_results IN ACCESS EXCLUSIVE MODE`)()
				begin := time.Now()
				r := hLoad(t, c, "--run-id", strconv.Itoa(hostileRunID), "--lock-timeout", "1m", "--statement-timeout", "1s")
				c.state["took"] = time.Since(begin)
				return r
			}, check: func(t *testing.T, c *hCtx) {
				require.Less(t, c.state["took"].(time.Duration), 30*time.Second, "the statement timeout bounds the wait")
				hAbortRow(t, c, hostileRunID, "statement timeout after 1s in ")
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
		{name: "sigterm-while-waiting", slow: true, input: "`ingest load` process sent SIGTERM while it waits for the run's advisory lock", base: baseBench, exit: 1, aborted: true,
			exec: hSigterm, want: []string{"cancelled (SIGTERM)"}, absent: []string{"use of closed network connection"},
			check: func(t *testing.T, c *hCtx) { hAbortRow(t, c, hostileRunID, "cancelled (SIGTERM)") }},
		{name: "github-401", input: "`ingest run`: GitHub answers 401 to the artifact listing", base: baseNone, exit: 1, aborted: true,
			exec: func(t *testing.T, c *hCtx) hResult {
				return hGitHubRun(t, c, func(f *hFake) {
					c.state["run"] = f.runID
					f.srv.Inject(fakegithub.Fault{Route: fakegithub.RouteArtifacts, Kind: fakegithub.Status, Status: 401, Message: "Bad credentials"})
				})
			}, want: []string{"401"}, check: func(t *testing.T, c *hCtx) { hAbortRow(t, c, c.state["run"].(int64), "401") }},
		{name: "github-500", slow: true, input: "`ingest run`: GitHub answers 500 to every artifact download", base: baseNone, exit: 1, aborted: true,
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
	defer hHoldInTx(t, c, `SELECT pg_advisory_xact_lock(`+store.RunLockKey+`)`, hostileRunID)()

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
