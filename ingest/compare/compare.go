// Package compare is `ingest compare`: a run tree read as `ingest load`
// reads it (ingest.ReadShadow), set beside what a database holds for that
// run — a database of ours, or one the reference ingest (InferenceX-app
// packages/db) wrote — row by row on the natural keys the two schemas
// share. Every difference is either explained by a named rule (Rules, one
// list, each documented in docs/operations.md "Comparing with the
// reference ingest") or unexplained. The database is read in one READ
// ONLY transaction; nothing is written anywhere.
package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/inferencex/ingest/schema"
)

// Table names, as both schemas spell them.
const (
	TableRuns        = "workflow_runs"
	TableBenchmarks  = "benchmark_results"
	TableEvals       = "eval_results"
	TableEvalSamples = "eval_samples"
	TableChangelog   = "changelog_entries"
	TableRunStats    = "run_stats"
	// TableTraces holds a benchmark row's trace, TableServerLogs each
	// file of its server log: keyed by the row (and the file's name).
	TableTraces     = "agentic_trace_replay"
	TableServerLogs = "server_logs"
)

// tables is the order of a report.
var tables = []string{TableRuns, TableBenchmarks, TableEvals, TableEvalSamples, TableChangelog, TableRunStats, TableTraces,
	TableServerLogs}

// Schema kinds of a target database.
const (
	SchemaOurs      = "ours"
	SchemaReference = "reference"
)

// Kinds of difference.
const (
	OnlyOurs  = "only_ours" // a row only our ingest would write
	OnlyDB    = "only_db"   // a row only the database holds
	Different = "different" // a value of a row both hold
)

// Unexplained is the rule of a difference no rule explains.
const Unexplained = "unexplained"

// row is one row of a table on one side: its natural key as text and the
// compared values (float64, string, bool or nil) by field name; metrics
// are fields named "metrics.<key>".
type row struct {
	values map[string]any
	// group is what rules match rows across configs by: for an eval row
	// (and its samples) the model, task and sequence, for a changelog
	// row its refs, for a run-stats row its GPU.
	group string
	// copies counts the tree's copies of a benchmark point.
	copies int
	agentx bool
	// layout is a trace's layout (ours only); primary marks a server log's
	// primary file; primaryOnly a database that keeps only that file.
	layout      string
	primary     bool
	primaryOnly bool
	// bundle marks a server log file of a multinode_server_logs_ artifact
	// (ours only); batched an eval row read from a results file named
	// with its concurrency (results_<time>_conc<N>.json, ours only).
	bundle  bool
	batched bool
}

// side is every compared row of one side, by table and key.
type side map[string]map[string]*row

func (s side) put(table, key string, r *row) {
	if s[table] == nil {
		s[table] = map[string]*row{}
	}
	s[table][key] = r
}

// Difference is one difference between the tree and the database.
type Difference struct {
	Table string `json:"table"`
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	// Field is the differing value of a Different row.
	Field string `json:"field,omitempty"`
	Ours  any    `json:"ours,omitempty"`
	DB    any    `json:"db,omitempty"`
	// RelChange is (db - ours) / |ours| for two numbers, nil otherwise.
	RelChange *float64 `json:"relChange,omitempty"`
	Rule      string   `json:"rule"`
}

// Result is a comparison.
type Result struct {
	RunID   int64  `json:"runId"`
	Attempt int    `json:"attempt"`
	Schema  string `json:"schema"`
	// Level is the reference's newest schema_migrations filename.
	Level string `json:"level,omitempty"`
	// Rows counts the rows compared per table on each side.
	Rows        map[string][2]int `json:"rows"`
	Differences []Difference      `json:"differences"`
}

// Unexplained counts the differences no rule explains.
func (r *Result) Unexplained() int {
	n := 0
	for _, d := range r.Differences {
		if d.Rule == Unexplained {
			n++
		}
	}
	return n
}

// ByRule counts the differences per rule.
func (r *Result) ByRule() map[string]int {
	m := map[string]int{}
	for _, d := range r.Differences {
		m[d.Rule]++
	}
	return m
}

// diff compares the two sides and classifies every difference.
func diff(ours, db side, schemaKind string) []Difference {
	var out []Difference
	for _, t := range tables {
		o, d := ours[t], db[t]
		for _, k := range sortedKeys(o, d) {
			or, dr := o[k], d[k]
			switch {
			case dr == nil:
				out = append(out, Difference{Table: t, Key: k, Kind: OnlyOurs})
			case or == nil:
				out = append(out, Difference{Table: t, Key: k, Kind: OnlyDB})
			default:
				out = append(out, valueDiffs(t, k, or, dr)...)
			}
		}
	}
	for i := range out {
		out[i].Rule = classify(&out[i], ours, db, schemaKind)
	}
	return out
}

func valueDiffs(table, key string, o, d *row) []Difference {
	fields := map[string]bool{}
	for f := range o.values {
		fields[f] = true
	}
	for f := range d.values {
		fields[f] = true
	}
	names := slices.Sorted(maps.Keys(fields))
	var out []Difference
	for _, f := range names {
		ov, oh := o.values[f]
		dv, dh := d.values[f]
		if oh && dh && ov == dv {
			continue
		}
		df := Difference{Table: table, Key: key, Kind: Different, Field: f, Ours: ov, DB: dv}
		if on, ok := ov.(float64); ok {
			if dn, ok := dv.(float64); ok && on != 0 {
				rc := (dn - on) / math.Abs(on)
				df.RelChange = &rc
			}
		}
		out = append(out, df)
	}
	return out
}

func sortedKeys(a, b map[string]*row) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]*row{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// configKey is a config's natural key as text.
func configKey(c schema.Config) string {
	return fmt.Sprintf("%s/%s/%s/%s spec=%s disagg=%t multinode=%t prefill=tp%d,ep%d,dpa=%t,w%d decode=tp%d,ep%d,dpa=%t,w%d gpus=%d+%d",
		c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod, c.Disagg, c.IsMultinode,
		c.PrefillTP, c.PrefillEP, c.PrefillDPAttention, c.PrefillNumWorkers,
		c.DecodeTP, c.DecodeEP, c.DecodeDPAttention, c.DecodeNumWorkers, c.NumPrefillGPU, c.NumDecodeGPU)
}

func optInt(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

// benchmarkKey is a benchmark point's key: the columns both schemas'
// unique keys share (the recipe fingerprint is not one at level 010).
func benchmarkKey(c schema.Config, btype string, isl, osl *int, conc int, offload string) string {
	return fmt.Sprintf("%s %s isl=%s osl=%s conc=%d offload=%s", configKey(c), btype, optInt(isl), optInt(osl), conc, offload)
}

// evalSeq is an eval row's task and sequence, without its config.
func evalSeq(task string, isl, osl, conc *int) string {
	return fmt.Sprintf("%s isl=%s osl=%s conc=%s", task, optInt(isl), optInt(osl), optInt(conc))
}

func evalKey(c schema.Config, task string, isl, osl, conc *int) string {
	return configKey(c) + " " + evalSeq(task, isl, osl, conc)
}

func sampleKey(eval string, doc int, filter string) string {
	return fmt.Sprintf("%s doc=%d filter=%q", eval, doc, filter)
}

func logKey(bench, file string) string { return bench + " file=" + file }

func changelogKey(base, head string, index int) string {
	return fmt.Sprintf("%s..%s #%d", base, head, index)
}

// number turns a JSON or Go number into float64; other values pass.
func number(v any) any {
	switch n := v.(type) {
	case float64:
		return n
	case float32:
		return float64(n)
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	}
	return v
}

// putMetrics adds a metrics map's keys as fields.
func putMetrics(values map[string]any, m map[string]any) {
	for k, v := range m {
		values["metrics."+k] = number(v)
	}
}
