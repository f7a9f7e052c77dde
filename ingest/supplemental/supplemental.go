// Package supplemental turns the reference's hand-curated data files
// (supplemental-evals.json, supplemental-bmk.json: arrays of eval rows and of
// benchmark rows with a nested metrics object) into a run tree, so that the
// one ingest path normalizes, dedupes, writes and reports them like the
// artifacts of a CI run.
//
// The rows belong to one synthetic workflow run (repository "supplemental",
// run id 1, attempt 1): dedupe is by natural key within that run, so a
// rerun of the same files is all duplicate and an edited file updates its
// rows in place. Every row keeps its provenance: the artifact names the
// file (eval_results_<stem>, results_<stem>), the row its index, the
// ledger entry the file's sha256, and the run's changelog entry (base
// "supplemental", head the sha256 of the files) lists every file with its
// sha256 and row count.
package supplemental

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Repo, RunID and RunAttempt name the synthetic workflow run of supplemental
// data. GitHub run ids of real sweeps are far larger, so run 1 never
// collides with one.
const (
	Repo       = "supplemental"
	RunID      = 1
	RunAttempt = 1
	RunName    = "Supplemental data"
)

// Kinds of supplemental files.
const (
	KindEvals      = "evals"
	KindBenchmarks = "benchmarks"
)

// File is one supplemental file as read.
type File struct {
	Path   string
	Name   string // base name
	Kind   string
	SHA256 [32]byte
	Size   int64
	Rows   int
	// Artifact is the artifact of the run tree that carries the file.
	Artifact string
	// Newest is the newest timestamp (evals) or date (benchmarks) of its
	// rows; zero when no row has one.
	Newest time.Time
	// Dates are the distinct benchmark row dates (YYYY-MM-DD).
	Dates []string
}

// Digest is the file's sha256 in hex.
func (f File) Digest() string { return hex.EncodeToString(f.SHA256[:]) }

// Tree is a run tree written for supplemental files.
type Tree struct {
	Dir   string
	Files []File
	// CreatedAt dates the synthetic run: the given date, else the newest
	// row timestamp or date of the files.
	CreatedAt time.Time
}

// Write reads the files and writes their run tree into dir (which must be
// empty). date, when not zero, dates the run; otherwise the newest row
// timestamp or date does, and a file set without any is an error.
func Write(dir string, paths []string, date time.Time) (Tree, error) {
	t := Tree{Dir: dir}
	if len(paths) == 0 {
		return t, fmt.Errorf("no supplemental file given")
	}
	seen := map[string]string{}
	for _, p := range paths {
		f, body, err := read(p)
		if err != nil {
			return t, err
		}
		if prev, dup := seen[f.Artifact]; dup {
			return t, fmt.Errorf("%s and %s would both be artifact %s: give files of one kind different names", prev, p, f.Artifact)
		}
		seen[f.Artifact] = p
		if err := os.MkdirAll(filepath.Join(dir, f.Artifact), 0o755); err != nil {
			return t, err
		}
		for name, b := range body {
			if err := os.WriteFile(filepath.Join(dir, f.Artifact, name), b, 0o644); err != nil {
				return t, err
			}
		}
		t.Files = append(t.Files, f)
		if f.Newest.After(t.CreatedAt) {
			t.CreatedAt = f.Newest
		}
	}
	if !date.IsZero() {
		t.CreatedAt = date
	}
	if t.CreatedAt.IsZero() {
		return t, fmt.Errorf("no row of %s has a timestamp or date: pass --date YYYY-MM-DD to date the supplemental run", strings.Join(paths, ", "))
	}
	sort.Slice(t.Files, func(i, j int) bool { return t.Files[i].Name < t.Files[j].Name }) // the order given does not matter
	if err := writeChangelog(dir, t.Files); err != nil {
		return t, err
	}
	if err := writeListing(dir, t); err != nil {
		return t, err
	}
	return t, nil
}

// read loads one file, names its kind and returns the files of its
// artifact (by name): for evals one file per row, newest description
// first (see evalRowFiles); for benchmarks the file with each row's
// metrics object lifted to the top level (the shape of an agg_bmk.json
// row).
func read(path string) (File, map[string][]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return File{}, nil, err
	}
	f := File{Path: path, Name: filepath.Base(path), SHA256: sha256.Sum256(raw), Size: int64(len(raw))}
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return f, nil, fmt.Errorf("%s: not a JSON array of rows: %v", path, err)
	}
	f.Rows = len(rows)
	objs := make([]map[string]json.RawMessage, len(rows))
	for i, r := range rows {
		var o map[string]json.RawMessage
		if json.Unmarshal(r, &o) == nil {
			objs[i] = o // non-objects stay nil: the reader reports them
		}
	}
	f.Kind, err = kind(f.Name, objs)
	if err != nil {
		return f, nil, fmt.Errorf("%s: %w", path, err)
	}
	stem := strings.TrimSuffix(f.Name, filepath.Ext(f.Name))
	switch f.Kind {
	case KindEvals:
		f.Artifact = "eval_results_" + stem
		f.Newest = newest(objs, "timestamp")
		return f, evalRowFiles(stem, rows, objs), nil
	default:
		f.Artifact = "results_" + stem
		f.Newest = newest(objs, "date")
		f.Dates = dates(objs)
		body, err := liftMetrics(rows, objs)
		if err != nil {
			return f, nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, map[string][]byte{f.Name: body}, nil
	}
}

// resultsStamp is the time in an lm-eval results file name
// (results_2026-02-19T16-05-08.926949.json).
var resultsStamp = regexp.MustCompile(`results_(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})`)

// evalRowFiles writes each eval row as a one-row file. The reference
// upserts the rows in file order, so when a file describes one natural key
// twice (the real file holds January and February results of 18 configs)
// the last description wins; the ingest keeps the first description of a
// key. The files are therefore named so that the newest description comes
// first: by the row's timestamp (else the time in its source results file
// name), later rows first on a tie. Each file names its row:
// <rank>-<stem>-row<N>.json is row N (0-based) of the original file.
func evalRowFiles(stem string, rows []json.RawMessage, objs []map[string]json.RawMessage) map[string][]byte {
	type described struct {
		index int
		at    time.Time
	}
	order := make([]described, len(rows))
	for i, o := range objs {
		order[i] = described{index: i}
		if t, ok := timeField(o, "timestamp"); ok {
			order[i].at = t
			continue
		}
		var src string
		if o != nil && json.Unmarshal(o["source"], &src) == nil {
			if m := resultsStamp.FindStringSubmatch(src); m != nil {
				if t, err := time.Parse("2006-01-02T15:04:05", m[1]+"T"+m[2]+":"+m[3]+":"+m[4]); err == nil {
					order[i].at = t
				}
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		if !order[a].at.Equal(order[b].at) {
			return order[a].at.After(order[b].at)
		}
		return order[a].index > order[b].index
	})
	width := len(fmt.Sprint(len(rows)))
	out := make(map[string][]byte, len(rows))
	for rank, d := range order {
		name := fmt.Sprintf("%0*d-%s-row%d.json", width, rank, stem, d.index)
		out[name] = append(append([]byte("["), rows[d.index]...), ']')
	}
	return out
}

// kind tells an evals file (rows with a task) from a benchmarks file (rows
// with a metrics object); an empty array by its name.
func kind(name string, objs []map[string]json.RawMessage) (string, error) {
	evals, bmk := 0, 0
	for _, o := range objs {
		if o == nil {
			continue
		}
		if _, ok := o["task"]; ok {
			evals++
		}
		if m, ok := o["metrics"]; ok && bytes.HasPrefix(bytes.TrimSpace(m), []byte("{")) {
			bmk++
		}
	}
	switch {
	case evals > 0 && bmk > 0:
		return "", fmt.Errorf("mixes eval rows (task) and benchmark rows (metrics): give each kind its own file")
	case evals > 0:
		return KindEvals, nil
	case bmk > 0:
		return KindBenchmarks, nil
	}
	lower := strings.ToLower(name)
	switch {
	case strings.Contains(lower, "eval"):
		return KindEvals, nil
	case strings.Contains(lower, "bmk") || strings.Contains(lower, "bench"):
		return KindBenchmarks, nil
	}
	return "", fmt.Errorf("neither eval rows (with task) nor benchmark rows (with a metrics object), and the name says neither")
}

// liftMetrics writes the rows with each metrics object's keys at the top
// level. A metric named like a row field is an error (it would be
// ambiguous which value is meant).
func liftMetrics(rows []json.RawMessage, objs []map[string]json.RawMessage) ([]byte, error) {
	out := make([]json.RawMessage, len(rows))
	for i, o := range objs {
		if o == nil {
			out[i] = rows[i]
			continue
		}
		m, ok := o["metrics"]
		if !ok {
			out[i] = rows[i]
			continue
		}
		var metrics map[string]json.RawMessage
		if err := json.Unmarshal(m, &metrics); err != nil {
			out[i] = rows[i] // not an object: the row stays as it is and fails on its metrics
			continue
		}
		flat := make(map[string]json.RawMessage, len(o)+len(metrics))
		for k, v := range o {
			if k != "metrics" {
				flat[k] = v
			}
		}
		keys := slices.Sorted(maps.Keys(metrics))
		for _, k := range keys {
			if _, clash := flat[k]; clash {
				return nil, fmt.Errorf("row %d: metric %q is also a field of the row", i, k)
			}
			flat[k] = metrics[k]
		}
		enc, err := json.Marshal(flat)
		if err != nil {
			return nil, fmt.Errorf("row %d: %v", i, err)
		}
		out[i] = enc
	}
	return json.MarshalIndent(out, "", "  ")
}

func newest(objs []map[string]json.RawMessage, field string) time.Time {
	var best time.Time
	for _, o := range objs {
		if t, ok := timeField(o, field); ok && t.After(best) {
			best = t
		}
	}
	return best
}

func dates(objs []map[string]json.RawMessage) []string {
	set := map[string]bool{}
	for _, o := range objs {
		if t, ok := timeField(o, "date"); ok {
			set[t.Format("2006-01-02")] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func timeField(o map[string]json.RawMessage, field string) (time.Time, bool) {
	if o == nil {
		return time.Time{}, false
	}
	var s string
	if json.Unmarshal(o[field], &s) != nil || s == "" {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// evalsOnly reports whether the files hold eval rows and no benchmark row.
func evalsOnly(files []File) bool {
	evals := false
	for _, f := range files {
		if f.Kind == KindBenchmarks && f.Rows > 0 {
			return false
		}
		if f.Kind == KindEvals && f.Rows > 0 {
			evals = true
		}
	}
	return evals
}

// writeChangelog describes the load as the run's changelog entry: the head
// ref is the sha256 of the files' digests, so a changed file is a new entry
// and the same files are the same entry.
func writeChangelog(dir string, files []File) error {
	h := sha256.New()
	var parts []string
	for _, f := range files {
		fmt.Fprintf(h, "%s %x\n", f.Name, f.SHA256)
		parts = append(parts, fmt.Sprintf("%s (%s, %d rows, sha256 %s)", f.Name, f.Kind, f.Rows, f.Digest()))
	}
	entry := map[string]any{
		"config-keys": []string{},
		"description": []string{"Supplemental data loaded from " + strings.Join(parts, ", ") + "."},
	}
	if evalsOnly(files) {
		// Eval rows and no benchmark row: the run has no benchmark data by
		// design, which the changelog says as a sweep's evals-only entry does.
		entry["evals-only"] = true
	}
	doc := map[string]any{
		"base_ref": "supplemental",
		"head_ref": "sha256:" + hex.EncodeToString(h.Sum(nil)),
		"entries":  []map[string]any{entry},
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "changelog-metadata"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), body, 0o644)
}

// writeListing writes artifacts.json: the synthetic run and one artifact
// per file, all uploaded when the run was created. The listing must hold
// the ids a GitHub listing holds; the synthetic ones number the artifacts
// in order (1 is the changelog).
func writeListing(dir string, t Tree) error {
	created := t.CreatedAt.UTC().Format(time.RFC3339)
	type artifact struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		CreatedAt   string `json:"created_at"`
		SizeInBytes int64  `json:"size_in_bytes"`
		Expired     bool   `json:"expired"`
	}
	arts := []artifact{{ID: 1, Name: "changelog-metadata", CreatedAt: created}}
	for i, f := range t.Files {
		arts = append(arts, artifact{ID: int64(i) + 2, Name: f.Artifact, CreatedAt: created, SizeInBytes: f.Size})
	}
	doc := map[string]any{
		"total_count": len(arts),
		"artifacts":   arts,
		"run": map[string]any{
			"id": RunID, "run_attempt": RunAttempt, "name": RunName, "event": "supplemental",
			"status": "completed", "conclusion": "success", "created_at": created,
		},
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "artifacts.json"), body, 0o644)
}
