package ingest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
		abort("listing-truncated-tampered-zip", `artifacts.json cut to {"artifacts": [ and a zip rewritten with tput_per_gpu 99999, --run-id given`,
			func(t *testing.T, dir string) {
				hTamperedZip(t, dir)
				hWriteListing(`{"artifacts": [`)(t, dir)
			}, withID),
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
		abort("listing-duplicate-names", "two listing entries with one name", func(t *testing.T, dir string) {
			hListing(t, dir, func(doc map[string]any) {
				arts := doc["artifacts"].([]any)
				dup := map[string]any{}
				for k, v := range arts[1].(map[string]any) {
					dup[k] = v
				}
				dup["id"] = 4999999999
				doc["artifacts"] = append(arts, dup)
			})
		}, nil, "duplicate"),
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
			}, exit: 3, want: []string{`duplicate key "exact_match,strict-match"`, "results_"},
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
