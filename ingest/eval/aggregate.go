package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/strictjson"
)

// aggregateMetricKeys are the scores of an agg_eval_all.json row
// (docs/formats.md, evals).
var aggregateMetricKeys = []string{"em_strict", "em_strict_se", "em_flexible", "em_flexible_se", "n_eff", "score", "score_se"}

// MaxEffectiveSamples bounds an eval's effective sample count (n_eff):
// the largest lm-eval tasks hold tens of thousands of documents, so a
// count above ten million is no count of an eval's samples.
const MaxEffectiveSamples = 10_000_000

// BadRow is an element of an aggregate that is not a usable row.
type BadRow struct {
	Index  int
	Reason string
	// Integration: the producer marked the row an infrastructure failure
	// (integration_error, infrastructure_success false).
	Integration bool
}

// ReadAggregate streams the rows of an eval_results_all/agg_eval_all.json
// array, calling row for every row read (skipped ones included) and bad
// for every element that is not a usable row. It returns an error when the
// file itself is unreadable (not JSON, not an array, truncated); rows
// delivered before that stand.
func ReadAggregate(r io.Reader, file string, row func(Row), bad func(BadRow)) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("empty file")
		}
		return fmt.Errorf("not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("not a JSON array of eval rows")
	}
	var chk strictjson.Checker
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("element %d: %v", i, err)
		}
		if err := chk.Check(raw); err != nil {
			bad(BadRow{Index: i, Reason: fmt.Sprintf("row %d: %v", i, err)})
			continue
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("element %d: %v", i, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			bad(BadRow{Index: i, Reason: fmt.Sprintf("element %d is not an object", i)})
			continue
		}
		if reason := infrastructureFailure(obj); reason != "" {
			bad(BadRow{Index: i, Reason: fmt.Sprintf("row %d: task %s: %s", i, catalog.ValueText(obj["task"]), reason), Integration: true})
			continue
		}
		rw, reason := aggregateRow(obj, file, i)
		if reason != "" {
			bad(BadRow{Index: i, Reason: fmt.Sprintf("row %d: %s", i, reason)})
			continue
		}
		row(rw)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("truncated array: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the array")
	}
	return nil
}

// aggregateRow maps one aggregate row. The producer's source path names
// the per-config artifact and results file (eval_results/<artifact>/<file>):
// the file's _conc<N> suffix is the row's concurrency, the artifact's
// topology tokens and 8k1k token fill what the row does not say.
func aggregateRow(obj map[string]any, file string, index int) (Row, string) {
	task := strings.ToLower(strings.TrimSpace(catalog.ValueText(obj["task"])))
	if task == "" {
		return Row{}, "task: missing"
	}
	source := catalog.ValueText(obj["source"])
	artifact := path.Base(path.Dir(source))
	isl, osl, agentic, bad := sequence(obj["isl"], obj["osl"], artifact, source)
	if bad != "" {
		return Row{}, bad
	}
	var conc *int
	if c, ok := fileConc(source); ok {
		conc = &c
	} else if v, ok := obj["conc"]; ok && v != nil {
		c, ok := intValue(v)
		if !ok || c <= 0 {
			return Row{}, "conc: " + catalog.DescribeValue(v) + " is not a positive integer"
		}
		conc = &c
	}
	if bad := badTopology(obj); bad != "" {
		return Row{}, bad
	}
	prefix := obj["model_prefix"]
	if prefix == nil {
		prefix = obj["infmax_model_prefix"]
	}
	m := map[string]any{}
	for _, k := range aggregateMetricKeys {
		v, ok := obj[k]
		if !ok || v == nil {
			continue
		}
		f, ok := floatValue(v)
		if !ok {
			return Row{}, k + ": " + catalog.DescribeValue(v) + " is not a finite number"
		}
		switch {
		case f < 0:
			return Row{}, k + ": " + catalog.DescribeValue(v) + " is negative"
		case k == "n_eff" && f != math.Trunc(f):
			return Row{}, k + ": " + catalog.DescribeValue(v) + " is not an integer"
		case k == "n_eff" && f > MaxEffectiveSamples:
			return Row{}, fmt.Sprintf("%s: %s is above %d samples", k, catalog.DescribeValue(v), MaxEffectiveSamples)
		case f > 1 && k != "n_eff":
			return Row{}, k + ": " + catalog.DescribeValue(v) + " is outside [0, 1]" // exact match and accuracy are fractions
		}
		m[k] = f
	}
	if _, ok := m["score"]; ok {
		if n := catalog.ValueText(obj["score_name"]); n != "" {
			m["score_name"] = n
		}
	}
	r := Row{Identity: identity(obj, prefix, artifact), Agentic: agentic, Task: task, ISL: isl, OSL: osl, Conc: conc,
		Metrics: m, File: file, Index: index}
	if !hasMetrics(m) {
		r.SkipReason = SkipNoMetrics
	}
	return r, ""
}

// infrastructureFailure says why an aggregate row is the producer's record
// of an eval that did not run (integration_error set, or
// infrastructure_success false), or "" for a measured row. Such a row's
// scores are no measurement.
func infrastructureFailure(obj map[string]any) string {
	if e, ok := obj["integration_error"]; ok && e != nil {
		if m, isObj := e.(map[string]any); isObj {
			return "integration error (" + strings.TrimSpace(catalog.ValueText(m["type"])+": "+catalog.ValueText(m["message"])) + "): not a score"
		}
		return "integration error (" + catalog.ValueText(e) + "): not a score"
	}
	if ok, set := catalog.ParseOptionalBool(obj["infrastructure_success"]); set && !ok {
		return "infrastructure_success is false: not a score"
	}
	return ""
}
