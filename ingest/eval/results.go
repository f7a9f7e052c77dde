package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/strictjson"
)

// maxResultsBytes bounds a results file read into memory; real lm-eval
// results are tens of KB (SWE-bench ones carry a report, still well below).
const maxResultsBytes = 64 << 20

// results is the part of an lm-eval results_*.json the ingest reads
// (docs/formats.md, evals). Results is kept raw until it is checked
// to be storable (task names and metric keys end up in text and jsonb).
type results struct {
	Version  *string         `json:"lm_eval_version"`
	Results  json.RawMessage `json:"results"`
	NSamples map[string]struct {
		Original  json.RawMessage `json:"original"`
		Effective json.RawMessage `json:"effective"`
	} `json:"n-samples"`
	ModelName string `json:"model_name"`
	// ResultFormat is "inferencex-eval-v1" for the producer's
	// compatibility results of its non-lm-eval harnesses (results_<adapter>_*.json:
	// Kimi and MiniMax vendor verifiers, BFCL), absent for lm-eval.
	ResultFormat *string `json:"result_format"`
	// IntegrationError {type, message} marks an infrastructure failure
	// (any result format): a zero-effective-sample result that is no score.
	IntegrationError json.RawMessage `json:"integration_error"`
	// Configs[task].generation_kwargs and Config.gen_kwargs (which lm-eval
	// applies over the task's) say how the model decoded: temperature and
	// do_sample (the report's eval evidence).
	Configs map[string]struct {
		GenerationKwargs map[string]any `json:"generation_kwargs"`
	} `json:"configs"`
	Config struct {
		GenKwargs map[string]any `json:"gen_kwargs"`
	} `json:"config"`
}

// Decoding is how an eval task's model decoded, as its results file says:
// the temperature and do_sample lm-eval used (nil where it does not say).
type Decoding struct {
	Temperature *float64
	DoSample    *bool
}

// decoding reads a task's decoding: gen_kwargs of the run over the task's
// generation_kwargs.
func (doc *results) decoding(task string) Decoding {
	var d Decoding
	for _, kw := range []map[string]any{doc.Configs[task].GenerationKwargs, doc.Config.GenKwargs} {
		if v, ok := kw["temperature"]; ok {
			if f, ok := floatValue(v); ok {
				d.Temperature = &f
			}
		}
		if v, ok := kw["do_sample"]; ok {
			if b, ok := catalog.ParseOptionalBool(v); ok {
				d.DoSample = &b
			}
		}
	}
	return d
}

// ResultFormatV1 is the producer's result format of its own harnesses.
const ResultFormatV1 = "inferencex-eval-v1"

// integrationError says what an integration_error object reports.
func integrationError(raw json.RawMessage) string {
	var e struct {
		Type    any `json:"type"`
		Message any `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return strings.TrimSpace(string(raw))
	}
	return strings.TrimSpace(catalog.ValueText(e.Type) + ": " + catalog.ValueText(e.Message))
}

// taskResult is one task of a results file, with its scores selected, or
// why its scores cannot be used (bad).
type taskResult struct {
	task    string
	index   int
	metrics map[string]any
	bad     string
	// integration: bad because the harness reported an infrastructure
	// failure (integration_error, or no effective sample).
	integration bool
	decoding    Decoding
}

// readResults parses a results file and returns its tasks in name order.
// A file that is unreadable, holds no task, or whose results PostgreSQL
// could not store (invalid UTF-8, escaped NUL, lone surrogate) is an error;
// a task with a bad score is returned with its reason.
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
	if err := strictjson.Check(data); err != nil {
		return nil, nil, err
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
	v1 := doc.ResultFormat != nil
	if v1 && *doc.ResultFormat != ResultFormatV1 {
		return nil, nil, fmt.Errorf("result_format %q is not supported (this ingest reads %s)", *doc.ResultFormat, ResultFormatV1)
	}
	integration := ""
	if doc.IntegrationError != nil && !isNull(doc.IntegrationError) {
		integration = integrationError(doc.IntegrationError)
	}
	var byTask map[string]map[string]json.RawMessage
	if !isNull(doc.Results) && doc.Results != nil {
		d := json.NewDecoder(bytes.NewReader(doc.Results))
		d.UseNumber()
		if err := d.Decode(&byTask); err != nil {
			return nil, nil, fmt.Errorf("results: not an object of tasks: %v", err)
		}
	}
	if len(byTask) == 0 {
		return nil, nil, fmt.Errorf("results holds no task")
	}
	names := slices.Sorted(maps.Keys(byTask))
	for i, name := range names {
		task := strings.ToLower(strings.TrimSpace(name))
		t := taskResult{task: task, index: i, decoding: doc.decoding(name)}
		if task == "" {
			t.task, t.bad = strconv.Quote(name), "task name is empty"
			tasks = append(tasks, t)
			continue
		}
		if integration != "" {
			// An infrastructure failure: its zero score is no measurement.
			t.bad, t.integration = "integration error ("+integration+"): not a score", true
			tasks = append(tasks, t)
			continue
		}
		m, err := selectScores(byTask[name])
		if err != nil {
			t.bad = err.Error()
			tasks = append(tasks, t)
			continue
		}
		if ns, ok := doc.NSamples[name]; ok && ns.Effective != nil && !isNull(ns.Effective) {
			var v any
			d := json.NewDecoder(bytes.NewReader(ns.Effective))
			d.UseNumber()
			n, ok := 0, d.Decode(&v) == nil
			if ok {
				n, ok = intValue(v)
			}
			if _, isStr := v.(string); !ok || isStr || n < 0 {
				t.bad = "n-samples effective: " + strings.TrimSpace(string(ns.Effective)) + " is not a non-negative integer"
				tasks = append(tasks, t)
				continue
			}
			if bound, what := effectiveBound(ns.Original); n > bound {
				t.bad = fmt.Sprintf("n-samples effective: %d is above %s", n, what)
				tasks = append(tasks, t)
				continue
			}
			m["n_eff"] = float64(n)
			if n == 0 {
				t.bad, t.integration = "no effective samples: not a score", true
				tasks = append(tasks, t)
				continue
			}
		} else if v1 {
			t.bad = "n-samples effective: missing"
			tasks = append(tasks, t)
			continue
		}
		t.metrics = m
		tasks = append(tasks, t)
	}
	return doc.Version, tasks, nil
}

// effectiveBound is the most effective samples a task can have: its
// original sample count when the file gives one, else MaxEffectiveSamples.
func effectiveBound(original json.RawMessage) (int, string) {
	var v any
	d := json.NewDecoder(bytes.NewReader(original))
	d.UseNumber()
	if len(original) > 0 && d.Decode(&v) == nil {
		if _, isStr := v.(string); !isStr {
			if n, ok := intValue(v); ok && n >= 0 && n < MaxEffectiveSamples {
				return n, fmt.Sprintf("the %d original samples", n)
			}
		}
	}
	return MaxEffectiveSamples, fmt.Sprintf("%d samples", MaxEffectiveSamples)
}

// isFractionMetric reports the lm-eval metrics whose values are fractions
// of documents: exact match and accuracy (they select the score).
func isFractionMetric(metric string) bool {
	return metric == "exact_match" || metric == "acc" || metric == "acc_norm"
}

// metricValue checks one lm-eval metric value: ok false drops it (a
// non-numeric value of a metric that is not a score: "alias", "N/A"
// standard errors); bad says why the task cannot be used (a score that is
// a string, not finite, or out of range).
func metricValue(key string, x any) (f float64, ok bool, bad string) {
	metric, _, _ := strings.Cut(key, ",")
	stderr := strings.HasSuffix(metric, "_stderr")
	fraction := isFractionMetric(metric)
	if n, isNum := x.(json.Number); isNum {
		v, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, "metric " + key + ": " + n.String() + " is not a finite number"
		}
		switch {
		case stderr && v < 0:
			return 0, false, "metric " + key + ": " + n.String() + " is negative"
		case fraction && (v < 0 || v > 1):
			return 0, false, "metric " + key + ": " + n.String() + " is outside [0, 1]"
		}
		return v, true, ""
	}
	if s, isStr := x.(string); isStr {
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && (fraction || stderr) {
			return 0, false, "metric " + key + ": " + strconv.Quote(s) + " is a string, not a number"
		}
	}
	if fraction {
		return 0, false, "metric " + key + ": " + catalog.DescribeValue(x) + " is not a number"
	}
	return 0, false, ""
}

// selectScores maps one task's lm-eval metrics (docs/formats.md, evals):
// em_strict/em_strict_se from the exact_match filter whose name contains
// "strict" or "resolved", em_flexible/em_flexible_se from the one containing
// "flex" or "extract"; score is em_strict, else accuracy, else absent, with
// its standard error kept separately in score_se. Every other numeric
// metric is kept under its lm-eval key; "alias" and non-numeric values
// ("N/A" standard errors) are dropped. A score field (exact match,
// accuracy, a standard error) that is a string, not finite, or out of
// range is an error naming the field.
func selectScores(raw map[string]json.RawMessage) (map[string]any, error) {
	nums := map[string]float64{}
	keys := slices.Sorted(maps.Keys(raw))
	numeric := keys[:0]
	for _, k := range keys {
		var x any
		d := json.NewDecoder(bytes.NewReader(raw[k]))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return nil, fmt.Errorf("metric %s: %v", k, err)
		}
		f, ok, bad := metricValue(k, x)
		if bad != "" {
			return nil, errors.New(bad)
		}
		if ok {
			nums[k] = f
			numeric = append(numeric, k)
		}
	}
	keys = numeric
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
