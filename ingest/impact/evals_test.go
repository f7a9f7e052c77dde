package impact

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestEvidenceThresholds: the producer's rule, most specific first (the
// model's own threshold, then the task's default, else none); a score
// under it is flagged; published scores attach by model and task; an
// integration error (no model, no score) gets neither.
func TestEvidenceThresholds(t *testing.T) {
	th, err := LoadThresholds()
	require.NoError(t, err)
	f := func(v float64) *float64 { return &v }
	ev := []schema.EvalEvidence{
		{Task: "gsm8k", Model: "qwen3.5", Score: f(0.9538)},             // models.qwen3.5: 0.94
		{Task: "gsm8k", Model: "dsr1", Score: f(0.905)},                 // models.dsr1: 0.91, below
		{Task: "gsm8k", Model: "newmodel", Score: f(0.905)},             // default: 0.90
		{Task: "gpqa_diamond_cot_n_shot", Model: "dsr1", Score: f(0.2)}, // default 0.30, below
		{Task: "mmlu", Model: "dsr1", Score: f(0.5)},                    // none
		{Task: "gsm8k", IntegrationError: "task gsm8k: integration error (Timeout: x): not a score"},
	}
	pub := map[schema.EvalTask][]schema.PublishedScore{{Model: "dsr1", Task: "gsm8k"}: {{RunID: 7, Score: 0.93}}}
	require.Equal(t, []schema.EvalTask{{Model: "dsr1", Task: "gpqa_diamond_cot_n_shot"}, {Model: "dsr1", Task: "gsm8k"},
		{Model: "dsr1", Task: "mmlu"}, {Model: "newmodel", Task: "gsm8k"}, {Model: "qwen3.5", Task: "gsm8k"}}, EvalTasks(ev))
	got := Evidence(ev, th, pub)
	type row struct {
		threshold *float64
		source    string
		below     bool
	}
	var rows []row
	for _, e := range got {
		rows = append(rows, row{e.Threshold, e.ThresholdSource, e.BelowThreshold})
	}
	require.Equal(t, []row{{f(0.94), "models.qwen3.5", false}, {f(0.91), "models.dsr1", true}, {f(0.90), "default", false},
		{f(0.30), "default", true}, {nil, "", false}, {nil, "", false}}, rows)
	require.Equal(t, []schema.PublishedScore{{RunID: 7, Score: 0.93}}, got[1].Published)
	require.Empty(t, got[0].Published)
}
