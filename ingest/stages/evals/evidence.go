package evals

import (
	"github.com/inferencex/ingest/ingest/eval"
	"github.com/inferencex/ingest/schema"
)

// Evidence lists the run's eval tasks for the report's eval evidence: each
// row staged (the first description of its key) with its score, effective
// samples and decoding, and each task whose harness reported an
// infrastructure failure. Thresholds and published scores are added by the
// caller.
func (r *Rows) Evidence() []schema.EvalEvidence {
	if r.s == nil {
		return nil
	}
	return r.s.evidence
}

// evidenceOf is the evidence of a staged row.
func evidenceOf(res schema.EvalResult, d eval.Decoding) schema.EvalEvidence {
	c := res.Config
	e := schema.EvalEvidence{Task: res.Task, Model: c.Model, Hardware: c.Hardware, Framework: c.Framework,
		Precision: c.Precision, SpecMethod: c.SpecMethod, Disagg: c.Disagg, Conc: res.Conc,
		Temperature: d.Temperature, DoSample: d.DoSample, Decoding: decodingOf(d), Published: []schema.PublishedScore{}}
	if v, ok := res.Metrics["score"].(float64); ok {
		e.Score = &v
	}
	if v, ok := res.Metrics["score_name"].(string); ok {
		e.ScoreName = v
	}
	if v, ok := res.Metrics["n_eff"].(float64); ok {
		n := int(v)
		e.EffectiveSamples = &n
	}
	return e
}

// decodingOf is "sampled" when the model sampled (do_sample, or a positive
// temperature), "greedy" when it did not (temperature 0 and no do_sample),
// "" when the results do not say.
func decodingOf(d eval.Decoding) string {
	switch {
	case d.DoSample != nil && *d.DoSample, d.Temperature != nil && *d.Temperature > 0:
		return "sampled"
	case d.Temperature != nil:
		return "greedy"
	}
	return ""
}
