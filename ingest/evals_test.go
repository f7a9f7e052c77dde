package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/schema"
)

// evalTree writes a generated run with evals.
func evalTree(t *testing.T, opts generate.Options) (string, generate.Manifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := generate.Write(dir, opts)
	require.NoError(t, err)
	return dir, m
}

func samplesFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "eval_*", "samples_*.jsonl"))
	require.NoError(t, err)
	return files
}

// A generated run's evals land as designed; the rerun stores nothing twice.
func TestGeneratedEvalsFirstIngestAndRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 20, Seed: 11, Evals: 5, EvalDocs: 12})
	first := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusSucceeded, first.Status, "%v", first.Failures)
	require.Equal(t, schema.Counts{New: int64(m.EvalKeys), Duplicate: int64(m.EvalRows - m.EvalKeys)}, first.Rows.Eval)
	require.EqualValues(t, m.EvalRows, first.Details.EvalRows)
	require.EqualValues(t, m.EvalSampleLines, first.Stats.EvalSamplesNew)
	require.EqualValues(t, 1, first.Stats.ChangelogEntriesWritten)
	// Evals of a benchmarked deployment share its configs row.
	require.Zero(t, e.count(`SELECT count(*) FROM eval_results e WHERE NOT EXISTS (
		SELECT 1 FROM configs c WHERE c.id = e.config_id)`))
	require.Equal(t, 12, e.count(`SELECT count(*) FROM eval_sample_texts WHERE kind = 'doc'`), "documents stored once across 5 configs")
	require.Equal(t, 12, e.count(`SELECT count(*) FROM eval_sample_texts WHERE kind = 'prompt'`))

	before := e.checksums(dataTables...)
	second := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{Duplicate: int64(m.EvalRows)}, second.Rows.Eval)
	require.Zero(t, second.Stats.EvalSamplesNew)
	require.Zero(t, second.Details.EvalSampleTextsNew)
	require.Zero(t, second.Stats.ChangelogEntriesWritten)
	require.Equal(t, before, e.checksums(dataTables...))
}

// Bad sample lines (truncated, not JSON, missing doc_id, NUL bytes) are
// counted and reported per file; every good line of the file still lands.
func TestBadSampleLinesAreCountedAndTheRestLands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 5, Seed: 12, Evals: 2, EvalDocs: 6})
	files := samplesFiles(t, dir)
	require.Len(t, files, 2)
	bad := files[0]
	data, err := os.ReadFile(bad)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	mangled := []string{
		"not json at all\n",
		`{"filter": "strict-match", "exact_match": 1}` + "\n",
		`{"doc_id": 77, "filter": "strict` + "\x00" + `match"}` + "\n",
	}
	out := strings.Join(lines[:4], "") + strings.Join(mangled, "") + strings.Join(lines[4:], "") +
		lines[5][:len(lines[5])/2] // a truncated last line
	require.NoError(t, os.WriteFile(bad, []byte(out), 0o644))

	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	require.EqualValues(t, m.EvalSampleLines, sum.Stats.EvalSamplesNew, "every good line landed")
	require.EqualValues(t, 4, sum.Details.EvalSampleLinesFailed)
	require.Equal(t, schema.Counts{New: 2, Duplicate: 2}, sum.Rows.Eval, "the eval rows themselves are fine")
	require.Len(t, sum.Failures, 1)
	f := sum.Failures[0]
	require.Equal(t, schema.CategoryEvalSamples, f.Category)
	require.Equal(t, filepath.Base(filepath.Dir(bad)), f.Artifact)
	require.Equal(t, filepath.Base(bad), f.File)
	require.Contains(t, f.Reason, "4 of 16 sample lines skipped")
	require.Contains(t, f.Reason, "line 5: not a JSON object")
	require.Contains(t, f.Reason, "line 6: missing doc_id")
	require.Contains(t, f.Reason, `line 7: field "filter": string holds a NUL`)
	require.EqualValues(t, 1, sum.FailureCount())
	require.Equal(t, m.EvalSampleLines, e.count(`SELECT count(*) FROM eval_samples`))

	// The rerun reads the file with bad lines again (and reports them
	// again); the clean one is recognised by its digest.
	before := e.checksums(dataTables...)
	again := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, sum.Failures, again.Failures)
	require.Zero(t, again.Stats.EvalSamplesNew)
	require.EqualValues(t, 1, again.Details.EvalSampleFilesUnchanged)
	require.Equal(t, before, e.checksums(dataTables...))
}

// reuseJSON is reuse_source_run.json as the preparation step writes it
// (ids as strings, attempts as numbers).
func writeReuse(t *testing.T, dir string, source, merge int64, sourceAttempt, mergeAttempt int) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "reused-ingest-metadata", "reuse_source_run.json"), `{
  "source_run_id": "`+itoa(source)+`",
  "source_run_attempt": `+itoa(int64(sourceAttempt))+`,
  "source_run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/`+itoa(source)+`",
  "source_pr_number": 2647,
  "source_head_sha": "0123456789abcdef0123456789abcdef01234567",
  "ingest_run_id": "`+itoa(merge)+`",
  "ingest_run_attempt": `+itoa(int64(mergeAttempt))+`,
  "ingest_run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/`+itoa(merge)+`"
}
`)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// A reused run (a pull request's sweep ingested for its merge run) stores
// benchmark and eval rows under the source run and attempt, and the
// changelog under the merge run's metadata; the run's date is the merge
// run's.
func TestReusedRunAttribution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const source, merge = int64(25763435778), int64(25800000000)
	dir, m := evalTree(t, generate.Options{Points: 12, Seed: 13, Evals: 2, EvalDocs: 4, RunID: source, Attempt: 2})
	writeReuse(t, dir, source, merge, 2, 1)
	// The merge run's own changelog replaces the source's: a reused run's
	// changelog is the merge run's.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "changelog-metadata")))
	writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), `{
  "base_ref": "1845f60558a952f3de8d3c762b068a83671f76af",
  "head_ref": "843c6254ff69b567f772f6a5fd97675af3d04431",
  "entries": [
    {"config-keys": ["qwen3.5-fp8-b200-sglang"], "description": ["Merge of PR 2647"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/2647",
     "evals-only": false, "all-evals": false, "append-only": false},
    {"config-keys": ["dsr1*"], "description": "A second entry, kept too. PR: https://github.com/SemiAnalysisAI/InferenceX/pull/2650",
     "evals-only": false, "all-evals": false, "append-only": false, "scenario-type": ["fixed-seq-len"]}
  ]
}`)
	mergeCreated := time.Date(2026, 11, 23, 17, 30, 0, 0, time.UTC)
	// The dispatch names the merge run; the caller knows its trigger context.
	sum := e.mustIngest(dir, ingest.Config{Run: schema.RunIdentity{SourceRunID: merge, SourceRunAttempt: 1},
		MergeMeta: schema.RunMeta{CreatedAt: mergeCreated, RunStartedAt: mergeCreated.Add(time.Minute)}})

	require.Equal(t, schema.RunIdentity{Repo: "SemiAnalysisAI/InferenceX", SourceRunID: source, SourceRunAttempt: 2,
		MergeRunID: merge, MergeRunAttempt: 1}, sum.Run)
	require.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/25800000000", sum.Links.MergeRun)
	require.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/25763435778", sum.Links.SourceRun)
	require.EqualValues(t, m.Points, sum.Rows.Benchmark.New)
	require.EqualValues(t, 2, sum.Rows.Eval.New)
	require.EqualValues(t, 2, sum.Stats.ChangelogEntriesWritten)

	// One workflow row: the source run and attempt, dated by the merge run.
	require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs`))
	var runID int64
	var attempt int
	var date string
	var created time.Time
	require.NoError(t, e.pool().QueryRow(context.Background(),
		`SELECT github_run_id, run_attempt, to_char(date, 'YYYY-MM-DD'), created_at FROM workflow_runs`).Scan(&runID, &attempt, &date, &created))
	require.Equal(t, source, runID)
	require.Equal(t, 2, attempt)
	require.Equal(t, "2026-11-23", date)
	require.True(t, created.Equal(mergeCreated))
	require.Equal(t, m.Points, e.count(`SELECT count(*) FROM benchmark_results b JOIN workflow_runs w ON w.id = b.workflow_run_id
		WHERE w.github_run_id = $1 AND w.run_attempt = 2`, source))
	require.Equal(t, 2, e.count(`SELECT count(*) FROM eval_results r JOIN workflow_runs w ON w.id = r.workflow_run_id
		WHERE w.github_run_id = $1 AND w.run_attempt = 2`, source))
	// The changelog: the merge run's entries, every one, named by the merge run.
	require.Equal(t, 2, e.count(`SELECT count(*) FROM changelog_entries c JOIN workflow_runs w ON w.id = c.workflow_run_id
		WHERE w.github_run_id = $1 AND c.merge_run_id = $2 AND c.merge_run_attempt = 1 AND c.date = '2026-11-23'
		AND c.head_ref = '843c6254ff69b567f772f6a5fd97675af3d04431'
		AND c.merge_run_url = 'https://github.com/SemiAnalysisAI/InferenceX/actions/runs/25800000000'`, source, merge))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM changelog_entries WHERE entry_index = 1
		AND pr_link = 'https://github.com/SemiAnalysisAI/InferenceX/pull/2650' AND scenario_types = '{fixed-seq-len}'`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM ingests WHERE github_run_id = $1 AND merge_run_id = $2`, source, merge))
	require.Contains(t, strings.Join(sum.Notes, "\n"), "rows are attributed to source run 25763435778 attempt 2")
}

// Without reuse metadata, a caller whose merge run differs from the source
// run gets the same attribution.
func TestCallerMergeRunDiffersFromSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const source, merge = int64(31000000001), int64(31000000009)
	dir, _ := evalTree(t, generate.Options{Points: 6, Seed: 14, Evals: 1, EvalDocs: 2, RunID: source})
	sum := e.mustIngest(dir, ingest.Config{Run: schema.RunIdentity{SourceRunID: source, MergeRunID: merge, MergeRunAttempt: 3},
		MergeMeta: schema.RunMeta{CreatedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}})
	require.Equal(t, merge, sum.Run.MergeRunID)
	require.Equal(t, 3, sum.Run.MergeRunAttempt)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM workflow_runs WHERE github_run_id = $1 AND date = '2026-12-01'`, source))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM changelog_entries WHERE merge_run_id = $1 AND merge_run_attempt = 3`, merge))
}

// Reuse metadata that names other runs, or cannot be read, aborts before
// anything is written.
func TestBadReuseMetadataAborts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, _ := evalTree(t, generate.Options{Points: 3, Seed: 15})
	for _, tc := range []struct{ body, want string }{
		{`{"source_run_id": "abc", "ingest_run_id": "5"}`, "source_run_id \"abc\" is not a positive integer"},
		{`{"source_run_id": 28485856738}`, "ingest_run_id is missing"},
		{`not json`, "not a reuse metadata object"},
		{`{"source_run_id": 28485856738, "ingest_run_id": 7}`, ""},
	} {
		writeFile(t, filepath.Join(dir, "reused-ingest-metadata", "reuse_source_run.json"), tc.body)
		sum, err := e.ingest(dir, ingest.Config{Run: schema.RunIdentity{SourceRunID: 999}})
		require.Error(t, err)
		if tc.want != "" {
			require.ErrorContains(t, err, tc.want)
		} else {
			require.ErrorContains(t, err, "names source run 28485856738 and merge run 7, not run 999")
		}
		require.Equal(t, schema.StatusAborted, sum.Status)
	}
	require.Equal(t, 0, e.count(`SELECT count(*) FROM workflow_runs`))
}

// A purged source run is not written at all, also when it is reused; the
// report says why.
func TestPurgedReusedRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const source, merge = int64(25763435778), int64(25800000000)
	dir, _ := evalTree(t, generate.Options{Points: 4, Seed: 16, Evals: 1, EvalDocs: 2, RunID: source, Attempt: 2})
	writeReuse(t, dir, source, merge, 2, 1)
	ov, err := overrides.Load(overrides.Extension{Data: []byte(`{"purgedRunAttempts":[{"runId":25763435778,"attempts":[2],"reason":"bad driver on the PR runners"}]}`)})
	require.NoError(t, err)
	e.deps.Overrides = ov
	before := e.checksums(dataTables...)
	sum := e.mustIngest(dir, ingest.Config{Run: schema.RunIdentity{SourceRunID: merge}})
	require.Equal(t, schema.StatusPurged, sum.Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM ingests WHERE status = 'purged' AND github_run_id = $1 AND run_attempt = 2 AND merge_run_id = $2`, source, merge),
		"the ledger records the purged ingest, and nothing else")
	require.Equal(t, schema.Rows{}, sum.Rows)
	require.Zero(t, sum.Stats.ChangelogEntriesWritten)
	require.Contains(t, strings.Join(sum.Notes, "\n"), "run 25763435778 attempt 2 is purged by the run overrides (bad driver on the PR runners): nothing was written")
	require.Equal(t, before, e.checksums(dataTables...))
}

// An evals-only changelog skips the benchmark and run-stats stages: their
// rows are counted as skipped, evals and the changelog still land.
func TestEvalsOnlyRunSkipsBenchmarks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 8, Seed: 17, Evals: 2, EvalDocs: 3})
	writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), `{"base_ref": "a", "head_ref": "b",
		"entries": [{"config-keys": ["dsr1-fp4-b200-sglang"], "description": ["evals only"], "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/9",
		"evals-only": true, "all-evals": false, "append-only": false}]}`)
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{Skipped: int64(m.RawBenchmarkRows)}, sum.Rows.Benchmark)
	require.EqualValues(t, m.RawBenchmarkRows, sum.Stats.RawBenchmarkRows)
	require.EqualValues(t, m.RawBenchmarkRows, sum.Details.EvalsOnlySkippedRows)
	require.Zero(t, sum.Stats.RunStatsNew)
	require.EqualValues(t, 2, sum.Rows.Eval.New)
	require.EqualValues(t, 1, sum.Stats.ChangelogEntriesWritten)
	require.Contains(t, strings.Join(sum.Notes, "\n"), "evals-only run (a changelog entry has evals-only: true): benchmark and run-stats stages skipped")
	require.Zero(t, e.count(`SELECT count(*) FROM benchmark_results`))
	require.Zero(t, e.count(`SELECT count(*) FROM run_stats`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM changelog_entries WHERE evals_only`))
}

// A run without changelog-metadata gets one fallback entry described from
// its metadata; a later ingest that has the real changelog replaces it.
func TestChangelogFallbackThenReal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, _ := evalTree(t, generate.Options{Points: 4, Seed: 18, Evals: 1, EvalDocs: 2})
	real, err := os.ReadFile(filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"))
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "changelog-metadata")))
	sum := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 1, sum.Stats.ChangelogEntriesWritten)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM changelog_entries WHERE is_fallback AND base_ref = 'unknown'
		AND head_ref = 'main' AND description = 'Run Sweep' AND config_keys = '{}'`))

	writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), string(real))
	sum = e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 1, sum.Stats.ChangelogEntriesWritten)
	require.Equal(t, 0, e.count(`SELECT count(*) FROM changelog_entries WHERE is_fallback`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM changelog_entries`))
	require.Contains(t, strings.Join(sum.Notes, "\n"), "1 changelog entry of an earlier ingest no longer in the changelog: removed")
}

// A samples file that changed since the last ingest replaces the row's
// stored samples: a row's samples are always those of its latest complete
// file.
func TestChangedSamplesFileReplacesSamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, m := evalTree(t, generate.Options{Points: 3, Seed: 19, Evals: 1, EvalDocs: 3})
	e.mustIngest(dir, ingest.Config{})
	files := samplesFiles(t, dir)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	changed := strings.Replace(string(data), `"filtered_resps": ["`, `"filtered_resps": ["9`, 1)
	require.NotEqual(t, string(data), changed)
	require.NoError(t, os.WriteFile(files[0], []byte(changed), 0o644))

	sum := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, m.EvalSampleLines, sum.Stats.EvalSamplesNew)
	require.Contains(t, strings.Join(sum.Notes, "\n"), "6 eval samples of an earlier ingest replaced")
	require.Equal(t, m.EvalSampleLines, e.count(`SELECT count(*) FROM eval_samples`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM eval_samples WHERE doc_id = 0 AND filter = 'strict-match' AND response LIKE '9%'`))
}

// Long values (sample texts, staged rows) are compressed with lz4 where the
// server has it, pglz being several times slower; both read the same.
func TestLongValuesAreCompressedWithLZ4(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.count(`SELECT count(*) FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)`) == 0 {
		t.Skip("this server has no lz4")
	}
	dir, _ := evalTree(t, generate.Options{Points: 4, Seed: 19, Evals: 2, EvalDocs: 3})
	sum := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.StatusSucceeded, sum.Status, "%v", sum.Failures)
	compressed := e.count(`SELECT count(*) FROM eval_sample_texts WHERE pg_column_compression(content) IS NOT NULL`)
	require.Positive(t, compressed, "the generated texts are long enough to be compressed")
	require.Equal(t, compressed, e.count(`SELECT count(*) FROM eval_sample_texts WHERE pg_column_compression(content) = 'lz4'`))
	var def string
	require.NoError(t, e.pool().QueryRow(context.Background(), `SHOW default_toast_compression`).Scan(&def))
	require.Equal(t, "pglz", def, "the setting is the transaction's own")
}
