package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// maxMetaBytes bounds a meta_env.json (a few hundred bytes in practice).
const maxMetaBytes = 1 << 20

// FileFailure is a file of an eval artifact that could not be read; it
// counts as one failed eval item.
type FileFailure struct {
	File   string
	Reason string
	// Integration: a harness's infrastructure failure (integration_error or
	// zero effective samples in an inferencex-eval-v1 result).
	Integration bool `json:",omitempty"`
	// Task and Conc name the task of a task's failure (not of a file's).
	Task string `json:"-"`
	Conc *int   `json:"-"`
}

// DirResult is what one per-config eval artifact holds.
type DirResult struct {
	// Rows are every task row read, skipped ones included.
	Rows     []Row
	Failures []FileFailure
	// FilesRead lists the files read (meta and results), for the ledger.
	FilesRead []string
}

// Opener opens the files of an artifact; it is the artifact's fs.FS, with
// a hook to digest what is read.
type Opener func(file string) (io.ReadCloser, error)

// ReadDir reads one per-config eval artifact (docs/formats.md, evals): the
// directory holding meta_env.json (the artifact root or
// one child directory), its lm-eval results files — the newest per
// concurrency for batched evals, restricted to completed_eval_concs; the
// newest for legacy ones — one row per task, and each row's samples file.
func ReadDir(open Opener, artifact string, files []string) DirResult {
	var res DirResult
	metaFile, ok := findMeta(files)
	if !ok {
		res.Failures = append(res.Failures, FileFailure{Reason: "no meta_env.json (not a per-config eval directory)"})
		return res
	}
	dir := path.Dir(metaFile)
	res.FilesRead = append(res.FilesRead, metaFile)
	meta, err := readMeta(open, metaFile)
	if err != nil {
		res.Failures = append(res.Failures, FileFailure{File: metaFile, Reason: err.Error()})
		return res
	}
	var resultFiles, sampleFiles []string
	for _, f := range files {
		if path.Dir(f) != dir {
			continue
		}
		switch {
		case isResultsFile(f):
			resultFiles = append(resultFiles, f)
		case isSamplesFile(f):
			sampleFiles = append(sampleFiles, f)
		}
	}
	if len(resultFiles) == 0 {
		res.Failures = append(res.Failures, FileFailure{File: metaFile, Reason: "no results_*.json next to meta_env.json"})
		return res
	}
	isl, osl, agentic, bad := sequence(meta["isl"], meta["osl"], artifact)
	if bad != "" {
		res.Failures = append(res.Failures, FileFailure{File: metaFile, Reason: bad})
		return res
	}
	if bad := checkMeta(meta); bad != "" {
		res.Failures = append(res.Failures, FileFailure{File: metaFile, Reason: bad})
		return res
	}
	chosen, bad := chooseResults(meta, resultFiles)
	if bad != "" {
		res.Failures = append(res.Failures, FileFailure{File: metaFile, Reason: bad})
		return res
	}
	ident := identity(meta, meta["infmax_model_prefix"], artifact)
	for _, c := range chosen {
		res.FilesRead = append(res.FilesRead, c.file)
		version, tasks, err := readResultsFile(open, c.file)
		if err != nil {
			res.Failures = append(res.Failures, FileFailure{File: c.file, Reason: err.Error()})
			continue
		}
		for _, t := range tasks {
			if t.bad != "" && c.skip == "" {
				res.Failures = append(res.Failures, FileFailure{File: c.file, Reason: "task " + t.task + ": " + t.bad,
					Integration: t.integration, Task: t.task, Conc: c.conc})
				continue
			}
			row := Row{Identity: ident, Agentic: agentic, Task: t.task, ISL: isl, OSL: osl, Conc: c.conc,
				LMEvalVersion: version, Metrics: t.metrics, File: c.file, Index: t.index, SkipReason: c.skip, Decoding: t.decoding}
			if row.SkipReason == "" && !hasMetrics(t.metrics) {
				row.SkipReason = SkipNoMetrics
			}
			if row.SkipReason == "" {
				row.SamplesFile = samplesFor(sampleFiles, t.task, c.file, c.batched)
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res
}

// findMeta finds meta_env.json at the root or in exactly one child
// directory.
func findMeta(files []string) (string, bool) {
	var child []string
	for _, f := range files {
		switch {
		case f == "meta_env.json":
			return f, true
		case path.Base(f) == "meta_env.json" && strings.Count(f, "/") == 1:
			child = append(child, f)
		}
	}
	if len(child) == 1 {
		return child[0], true
	}
	return "", false
}

func readMeta(open Opener, file string) (map[string]any, error) {
	f, err := open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot open: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	if len(data) > maxMetaBytes {
		return nil, fmt.Errorf("meta_env.json is larger than %d bytes", maxMetaBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	if err := strictjson.Check(data); err != nil {
		return nil, err // its strings name the deployment
	}
	var meta map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil || meta == nil {
		if err == nil {
			err = fmt.Errorf("null")
		}
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	return meta, nil
}

func readResultsFile(open Opener, file string) (*string, []taskResult, error) {
	f, err := open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open: %v", err)
	}
	defer f.Close()
	return readResults(f)
}

// chosen is a results file to read, with the concurrency of its rows and
// the reason they are skipped, if they are.
type chosen struct {
	file    string
	conc    *int
	batched bool
	skip    string
}

// chooseResults picks the results files of an eval set. Legacy sets: the
// newest file (lm-eval names carry a sortable timestamp; a collision suffix
// sorts after the original). Batched sets (list-valued eval_concs): the
// newest _conc<N> file per N, rows of concurrencies not completed
// (completedConcs: failed ones never are) skipped. It reports concurrency
// lists that contradict each other.
func chooseResults(meta map[string]any, files []string) ([]chosen, string) {
	sort.Strings(files)
	if _, batched := meta["eval_concs"].([]any); !batched {
		var conc *int
		if c, ok := intValue(meta["conc"]); ok && c > 0 {
			conc = &c
		}
		return []chosen{{file: files[len(files)-1], conc: conc}}, ""
	}
	completed, bad := completedConcs(meta)
	if bad != "" {
		return nil, bad
	}
	newest := map[int]string{}
	for _, f := range files {
		if c, ok := fileConc(f); ok {
			newest[c] = f // files are sorted: the last one wins
		}
	}
	ns := slices.Sorted(maps.Keys(newest))
	out := make([]chosen, 0, len(ns))
	for _, c := range ns {
		ch := chosen{file: newest[c], conc: &c, batched: true}
		if !completed[c] {
			ch.skip = SkipConcNotCompleted
		}
		out = append(out, ch)
	}
	return out, ""
}

// samplesFor finds the samples file of a task: the one of the same lm-eval
// run (samples_<task>_<stem>.jsonl), else the newest samples_<task>_*.jsonl
// of the same concurrency.
func samplesFor(files []string, task, resultsFile string, batched bool) string {
	stem := resultsStem(resultsFile)
	want := "samples_" + task + "_" + stem + ".jsonl"
	conc, _ := fileConc(resultsFile)
	best := ""
	for _, f := range files {
		base := strings.ToLower(path.Base(f))
		if base == strings.ToLower(want) {
			return f
		}
		if !strings.HasPrefix(base, "samples_"+task+"_") {
			continue
		}
		rest := strings.TrimPrefix(base, "samples_"+task+"_")
		if strings.Contains(concSuffix.ReplaceAllString(rest, ".jsonl"), "_") {
			continue // a task whose name extends this one (gsm8k_cot_…)
		}
		c, isBatched := fileConc(f)
		if isBatched != batched || c != conc {
			continue
		}
		if f > best {
			best = f
		}
	}
	return best
}
