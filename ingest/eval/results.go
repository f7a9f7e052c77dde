package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// maxResultsBytes bounds a results file read into memory; real lm-eval
// results are tens of KB (SWE-bench ones carry a report, still well below).
const maxResultsBytes = 64 << 20

// results is the part of an lm-eval results_*.json the ingest reads
// (docs/artifacts.md §4.3, §4.5).
type results struct {
	Version  *string                               `json:"lm_eval_version"`
	Results  map[string]map[string]json.RawMessage `json:"results"`
	NSamples map[string]struct {
		Effective json.RawMessage `json:"effective"`
	} `json:"n-samples"`
	ModelName string `json:"model_name"`
}

// taskResult is one task of a results file, with its scores selected.
type taskResult struct {
	task    string
	index   int
	metrics map[string]any
}

// readResults parses a results file and returns its tasks in name order.
func readResults(r io.Reader) (version *string, tasks []taskResult, err error) {
	data, err := io.ReadAll(io.LimitReader(r, maxResultsBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxResultsBytes {
		return nil, nil, fmt.Errorf("results file is larger than %d bytes", maxResultsBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("empty file")
	}
	var doc results
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("not an lm-eval results object: %v", err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("not an lm-eval results object: data after the object")
	}
	if doc.Version == nil && doc.Results == nil {
		return nil, nil, fmt.Errorf("not an lm-eval results object: no lm_eval_version and no results")
	}
	names := make([]string, 0, len(doc.Results))
	for name := range doc.Results {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		task := strings.ToLower(strings.TrimSpace(name))
		if task == "" {
			continue
		}
		m, err := selectScores(doc.Results[name])
		if err != nil {
			return nil, nil, fmt.Errorf("task %s: %v", name, err)
		}
		if ns, ok := doc.NSamples[name]; ok {
			var v any
			if err := json.Unmarshal(ns.Effective, &v); err == nil {
				if n, ok := floatValue(v); ok {
					m["n_eff"] = n
				}
			}
		}
		tasks = append(tasks, taskResult{task: task, index: i, metrics: m})
	}
	return doc.Version, tasks, nil
}

// selectScores maps one task's lm-eval metrics (docs/artifacts.md §4.6):
// em_strict/em_strict_se from the exact_match filter whose name contains
// "strict" or "resolved", em_flexible/em_flexible_se from the one containing
// "flex" or "extract"; score is em_strict, else accuracy, else absent, with
// its standard error kept separately in score_se. Every other numeric
// metric is kept under its lm-eval key; "alias" and non-numeric values
// ("N/A" standard errors) are dropped.
func selectScores(raw map[string]json.RawMessage) (map[string]any, error) {
	nums := map[string]float64{}
	keys := make([]string, 0, len(raw))
	for k, v := range raw {
		var x any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return nil, fmt.Errorf("metric %s: %v", k, err)
		}
		if f, ok := floatValue(x); ok {
			nums[k] = f
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := map[string]any{}
	used := map[string]bool{}
	pick := func(name string, match func(filter string) bool) {
		for _, k := range keys {
			metric, filter, ok := strings.Cut(k, ",")
			if !ok || metric != "exact_match" || !match(strings.ToLower(filter)) {
				continue
			}
			out[name] = nums[k]
			used[k] = true
			if se, ok := nums["exact_match_stderr,"+filter]; ok {
				out[name+"_se"] = se
				used["exact_match_stderr,"+filter] = true
			}
			return
		}
	}
	pick("em_strict", func(f string) bool { return strings.Contains(f, "strict") || strings.Contains(f, "resolved") })
	pick("em_flexible", func(f string) bool {
		return strings.Contains(f, "flex") || strings.Contains(f, "extract")
	})
	if v, ok := out["em_strict"]; ok {
		out["score"], out["score_name"] = v, "em_strict"
		if se, ok := out["em_strict_se"]; ok {
			out["score_se"] = se
		}
	} else if k, ok := firstMetric(keys, "acc"); ok {
		out["score"], out["score_name"] = nums[k], "accuracy"
		_, filter, _ := strings.Cut(k, ",")
		se := "acc_stderr"
		if filter != "" {
			se += "," + filter
		}
		if v, ok := nums[se]; ok {
			out["score_se"] = v
		}
	}
	for _, k := range keys {
		if !used[k] {
			out[k] = nums[k]
		}
	}
	return out, nil
}

// firstMetric finds "<metric>" or "<metric>,<filter>" (first in key order).
func firstMetric(keys []string, metric string) (string, bool) {
	for _, k := range keys {
		if m, _, _ := strings.Cut(k, ","); m == metric {
			return k, true
		}
	}
	return "", false
}

// hasMetrics reports whether a task's metrics hold anything numeric beyond
// the sample count.
func hasMetrics(m map[string]any) bool {
	for k := range m {
		if k != "n_eff" && k != "score_name" {
			return true
		}
	}
	return false
}
