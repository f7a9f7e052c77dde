package impact

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// thresholdsJSON are the producer's minimum eval scores, per task with
// per-model overrides; an operator extends the file, not the code.
//
//go:embed eval_thresholds.json
var thresholdsJSON []byte

// Thresholds are minimum eval scores by task, with per-model overrides.
type Thresholds struct {
	Default map[string]float64            `json:"default"`
	Models  map[string]map[string]float64 `json:"models"`
}

// LoadThresholds parses the embedded threshold table.
func LoadThresholds() (Thresholds, error) {
	var t Thresholds
	if err := json.Unmarshal(thresholdsJSON, &t); err != nil {
		return t, fmt.Errorf("eval_thresholds.json: %w", err)
	}
	return t, nil
}

// resolve is the threshold of a model's task, most specific first: the
// model's own, then the task's default; ok false when there is none.
func (t Thresholds) resolve(model, task string) (v float64, source string, ok bool) {
	if v, ok := t.Models[model][task]; ok {
		return v, "models." + model, true
	}
	if v, ok := t.Default[task]; ok {
		return v, "default", true
	}
	return 0, "", false
}

// EvalTasks are the model and task pairs of the evidence whose published
// scores to look up, sorted and unique.
func EvalTasks(ev []schema.EvalEvidence) []schema.EvalTask {
	var out []schema.EvalTask
	for _, e := range ev {
		if e.Model == "" || e.Task == "" {
			continue
		}
		k := schema.EvalTask{Model: e.Model, Task: e.Task}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b schema.EvalTask) int {
		return cmp.Or(strings.Compare(a.Model, b.Model), strings.Compare(a.Task, b.Task))
	})
	return out
}

// Evidence completes the run's eval evidence: each task's threshold (and
// whether its score is below it) and the scores other runs published for
// its model and task, replacing any it held (an earlier ingest's, on a
// rerun answered from the ledger). ev is modified in place and returned.
func Evidence(ev []schema.EvalEvidence, t Thresholds, published map[schema.EvalTask][]schema.PublishedScore) []schema.EvalEvidence {
	for i := range ev {
		e := &ev[i]
		if v, src, ok := t.resolve(e.Model, e.Task); ok && e.Model != "" {
			e.Threshold, e.ThresholdSource = &v, src
			e.BelowThreshold = e.Score != nil && *e.Score < v
		}
		e.Published = published[schema.EvalTask{Model: e.Model, Task: e.Task}]
		if e.Published == nil {
			e.Published = []schema.PublishedScore{}
		}
	}
	return ev
}
