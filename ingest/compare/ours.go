package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// capture is the ShadowWriter of a compare: it keeps the eval rows, a
// compact form of every sample line, and the changelog rows.
type capture struct {
	evals     []schema.StagedEval
	samples   []sampleLine
	changelog []schema.ChangelogRow
}

// sampleLine is a staged sample with its texts reduced to digests.
type sampleLine struct {
	eval     schema.EvalKey
	doc      int
	filter   string
	target   any
	response any
	score    any
	passed   any
}

func (c *capture) StageEvals(_ context.Context, rows []schema.StagedEval) error {
	c.evals = append(c.evals, rows...)
	return nil
}

func (c *capture) StageEvalSamples(_ context.Context, next func() (schema.StagedEvalSample, bool, error)) (int64, error) {
	var n int64
	for {
		s, ok, err := next()
		if err != nil || !ok {
			return n, err
		}
		n++
		l := sampleLine{eval: s.Eval, doc: s.DocID, filter: s.Filter, target: textDigest(s.Target), response: textDigest(s.Response)}
		if s.Score != nil {
			l.score = *s.Score
		}
		if s.Passed != nil {
			l.passed = *s.Passed
		}
		c.samples = append(c.samples, l)
	}
}

func (c *capture) StoredEvalSamples(context.Context) (map[schema.EvalKey]schema.EvalSamplesFile, error) {
	return map[schema.EvalKey]schema.EvalSamplesFile{}, nil
}

func (c *capture) ApplyEvals(context.Context, []schema.EvalSamplesFile) (schema.EvalApplyResult, error) {
	return schema.EvalApplyResult{Staged: int64(len(c.evals))}, nil
}

func (c *capture) WriteChangelog(_ context.Context, rows []schema.ChangelogRow) (int64, int64, error) {
	c.changelog = rows
	return int64(len(rows)), 0, nil
}

// textDigest stands for a sample text in a compare: "sha256:" and the
// first 12 hex digits of the text's sha256, nil for no text. Sample texts
// are long; a digest tells equal from different.
func textDigest(s *string) any {
	if s == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(*s))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// oursSide is what our ingest would write for the shadow read.
func oursSide(sh *ingest.Shadow, c *capture) side {
	s := side{}
	m := sh.Start.Meta
	s.put(TableRuns, runKey(sh.Start.Run.SourceRunID, sh.Start.Run.SourceRunAttempt), &row{values: map[string]any{
		"head_sha": m.HeadSHA, "html_url": m.HTMLURL, "conclusion": nilIfEmpty(m.Conclusion)}})

	// One winner per point, as the store ranks copies
	// (schema.CompareCopies).
	best := map[string]int{}
	copies := map[string]int{}
	for i := range sh.Benchmarks {
		b := &sh.Benchmarks[i]
		p := &b.Point
		k := benchmarkKey(p.Config, p.BenchmarkType, p.ISL, p.OSL, p.Conc, p.OffloadMode)
		copies[k]++
		j, ok := best[k]
		if !ok || schema.CompareCopies(b.Rank(), sh.Benchmarks[j].Rank()) < 0 {
			best[k] = i
		}
	}
	for k, i := range best {
		b := &sh.Benchmarks[i]
		metrics := b.StoredMetrics
		if metrics == nil {
			metrics = b.Point.Metrics
		}
		v := map[string]any{"image": strOrNil(b.Point.Image)}
		putMetrics(v, metrics)
		s.put(TableBenchmarks, k, &row{values: v, copies: copies[k], agentx: b.Point.BenchmarkType == schema.BenchmarkAgenticTraces})
	}

	evalKeys := map[schema.EvalKey]string{}
	for _, e := range c.evals {
		r := e.Result
		k := evalKey(r.Config, r.Task, r.ISL, r.OSL, r.Conc)
		evalKeys[e.Key] = k
		v := map[string]any{"lm_eval_version": strOrNil(r.LMEvalVersion)}
		putMetrics(v, r.Metrics)
		s.put(TableEvals, k, &row{values: v, group: r.Config.Model + " " + evalSeq(r.Task, r.ISL, r.OSL, r.Conc)})
	}
	for _, l := range c.samples {
		ek, ok := evalKeys[l.eval]
		if !ok {
			continue
		}
		s.put(TableEvalSamples, sampleKey(ek, l.doc, l.filter), &row{group: ek, values: map[string]any{
			"target": l.target, "response": l.response, "score": l.score, "passed": l.passed}})
	}
	for _, e := range c.changelog {
		s.put(TableChangelog, changelogKey(e.BaseRef, e.HeadRef, e.Index), &row{group: e.BaseRef + ".." + e.HeadRef,
			values: changelogValues(e.Description, e.ConfigKeys, e.PRLink)})
	}
	for _, st := range sh.RunStats {
		s.put(TableRunStats, st.Cluster, &row{group: st.Hardware, values: map[string]any{
			"hardware": st.Hardware, "n_success": float64(st.NSuccess), "total": float64(st.Total)}})
	}
	return s
}

func changelogValues(desc string, keys []string, pr *string) map[string]any {
	ks := slices.Clone(keys)
	slices.Sort(ks)
	joined := ""
	for i, k := range ks {
		if i > 0 {
			joined += ","
		}
		joined += k
	}
	return map[string]any{"description": desc, "config_keys": joined, "pr_link": strOrNil(pr)}
}

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
