// Package quarantine reads the producer's lists of quarantined rows: the
// rejected_rows_<prefix> and rejected_rows_eval_<prefix> artifacts, whose
// rejected_rows.json names every row the collector left out of the
// results_<prefix> and eval_results_<prefix> aggregates. The per-config
// bmk_* and eval_* artifacts still carry those rows; the ingest skips them.
package quarantine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// File is the list inside each rejected_rows_* artifact.
const File = "rejected_rows.json"

// MaxListBytes bounds one list read into memory.
const MaxListBytes = 256 << 20

// MaxFileBytes bounds a per-job benchmark file compared with a listed row.
const MaxFileBytes = 64 << 20

// IsList reports whether the artifact named name is a list the ingest
// reads. rejected_rows_run_stats is not: run-stats publishes only the
// entries it accepted, so there is nothing left to skip.
func IsList(name string) bool {
	return strings.HasPrefix(name, "rejected_rows_") && name != "rejected_rows_run_stats"
}

// isEvalList: rejected_rows_eval_<prefix> lists eval tasks, every other
// list benchmark files.
func isEvalList(name string) bool { return strings.HasPrefix(name, "rejected_rows_eval_") }

// Lists are the quarantined rows of a run, indexed for the benchmark and
// eval readers. The zero value lists nothing.
type Lists struct {
	// files maps a benchmark source (<artifact>/<file>) to the rows listed
	// for it, decoded as plain JSON (numbers as float64).
	files map[string][]any
	// tasks holds the eval tasks listed, by results file and task.
	tasks map[evalKey]bool
	// Benchmark and Eval count the entries listed.
	Benchmark, Eval int
}

type evalKey struct{ file, task string }

// Read adds one artifact's list. A list that cannot identify its rows is
// an error naming the entry: ingesting a row the producer meant to exclude
// is worse than not ingesting the run.
func (l *Lists) Read(artifact string, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxListBytes+1))
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if len(data) > MaxListBytes {
		return fmt.Errorf("larger than %d bytes", MaxListBytes)
	}
	if !json.Valid(data) {
		var v any
		return fmt.Errorf("not JSON: %v", json.Unmarshal(data, &v))
	}
	if err := strictjson.Check(data); err != nil {
		return err
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil || entries == nil {
		return fmt.Errorf("not a JSON array of rejected rows")
	}
	if l.files == nil {
		l.files, l.tasks = map[string][]any{}, map[evalKey]bool{}
	}
	for i, raw := range entries {
		var e map[string]json.RawMessage
		var source string
		rowRaw, hasRow := json.RawMessage(nil), false
		if json.Unmarshal(raw, &e) == nil && e != nil {
			rowRaw, hasRow = e["row"]
		}
		if !hasRow || json.Unmarshal(e["source"], &source) != nil || !isString(e["source"]) {
			return fmt.Errorf("entry %d has no source or row", i)
		}
		if isEvalList(artifact) {
			var row map[string]json.RawMessage
			var file, task string
			if json.Unmarshal(rowRaw, &row) != nil || row == nil || !isString(row["source"]) || !isString(row["task"]) ||
				json.Unmarshal(row["source"], &file) != nil || json.Unmarshal(row["task"], &task) != nil {
				return fmt.Errorf("entry %d has no eval source or task", i)
			}
			l.tasks[evalKey{lastTwo(file), strings.ToLower(task)}] = true
			l.Eval++
			continue
		}
		var row any
		if err := json.Unmarshal(rowRaw, &row); err != nil {
			return fmt.Errorf("entry %d: row: %v", i, err)
		}
		l.files[source] = append(l.files[source], row)
		l.Benchmark++
	}
	return nil
}

// Listed reports whether any row is listed for the benchmark file source
// (<artifact>/<file>): only then is its content worth comparing.
func (l *Lists) Listed(source string) bool { return len(l.files[source]) > 0 }

// BenchmarkFile reports whether the per-job file source, whose whole
// content is data, is a listed row: the path and the content must both
// match, so a stale list cannot hide a file a later attempt re-uploaded
// with a good row. Numbers compare by value, objects regardless of key
// order.
func (l *Lists) BenchmarkFile(source string, data []byte) bool {
	rows := l.files[source]
	if len(rows) == 0 {
		return false
	}
	var content any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&content); err != nil {
		return false
	}
	for _, row := range rows {
		if reflect.DeepEqual(row, content) {
			return true
		}
	}
	return false
}

// EvalTask reports whether task of the per-config results file source is
// listed. Eval rows record the collector's path to their results file,
// <download dir>/<artifact>/<file>; its last two segments identify the
// file in any download layout.
func (l *Lists) EvalTask(source, task string) bool {
	return l.tasks[evalKey{lastTwo(source), strings.ToLower(task)}]
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// lastTwo is the last two segments of a slash-separated path.
func lastTwo(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}
