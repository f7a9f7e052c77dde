package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// capture is the ShadowWriter of a compare: it keeps the eval rows, a
// compact form of every sample line, and the changelog rows.
type capture struct {
	evals     []schema.StagedEval
	samples   []sampleLine
	changelog []schema.ChangelogRow
	// streams are the traces stage's staged streams by id: the sha256 and
	// length of their bytes (a log text as stored, a blob compressed).
	streams map[int32]*streamSum
	traces  schema.TraceApply
}

type streamSum struct {
	h    hash.Hash
	size int64
}

func (c *capture) StageTraceChunks(_ context.Context, next func() (schema.TraceChunk, bool, error)) (int64, error) {
	if c.streams == nil {
		c.streams = map[int32]*streamSum{}
	}
	var n int64
	for {
		ch, ok, err := next()
		if err != nil || !ok {
			return n, err
		}
		n++
		s := c.streams[ch.Stream]
		if s == nil {
			s = &streamSum{h: sha256.New()}
			c.streams[ch.Stream] = s
		}
		s.h.Write(ch.Data)
		s.size += int64(len(ch.Data))
	}
}

// ApplyTraces keeps what the traces stage would write. Nothing is stored,
// so every row link it would write is one it links, as a load into an
// empty database does (the stage warns when the two counts differ).
func (c *capture) ApplyTraces(_ context.Context, a schema.TraceApply) (schema.TraceApplyResult, error) {
	c.traces = a
	return schema.TraceApplyResult{RowsLinked: int64(len(a.TraceLinks))}, nil
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
	return shortDigest(sum[:])
}

// oursSide is what our ingest would write for the shadow read.
func oursSide(sh *ingest.Shadow, c *capture) side {
	s := side{}
	m := sh.Start.Meta
	s.put(TableRuns, runKey(sh.Start.Run.SourceRunID, sh.Start.Run.SourceRunAttempt), &row{values: map[string]any{
		"head_sha": m.HeadSHA, "html_url": m.HTMLURL, "conclusion": nilIfEmpty(m.Conclusion)}})

	// One row per point: the shadow's winners (schema.CompareCopies).
	copies := map[string]int{}
	for i := range sh.Benchmarks {
		copies[stagedKey(&sh.Benchmarks[i])]++
	}
	rowKeys := make(map[int64]string, len(sh.Winners))
	for i, bi := range sh.Winners {
		b := &sh.Benchmarks[bi]
		k := stagedKey(b)
		rowKeys[int64(i+1)] = k
		metrics := b.StoredMetrics
		if metrics == nil {
			metrics = b.Point.Metrics
		}
		v := map[string]any{"image": strOrNil(b.Point.Image)}
		putMetrics(v, metrics)
		s.put(TableBenchmarks, k, &row{values: v, copies: copies[k], agentx: b.Point.BenchmarkType == schema.BenchmarkAgenticTraces})
	}
	c.putTraces(s, rowKeys)

	evalKeys := map[schema.EvalKey]string{}
	for _, e := range c.evals {
		r := e.Result
		k := evalKey(r.Config, r.Task, r.ISL, r.OSL, r.Conc)
		evalKeys[e.Key] = k
		v := map[string]any{"lm_eval_version": strOrNil(r.LMEvalVersion)}
		putMetrics(v, r.Metrics)
		s.put(TableEvals, k, &row{values: v, group: r.Config.Model + " " + evalSeq(r.Task, r.ISL, r.OSL, r.Conc),
			batched: batchedResults.MatchString(path.Base(e.Source.File))})
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

// multinodeLogsArtifact begins the name of a multinode job's server log
// bundle (multinode_server_logs_<x>, its logs in a tarball).
const multinodeLogsArtifact = "multinode_server_logs_"

// batchedResults is the name of a batched eval's results file: one per
// concurrency in one artifact (eval_concs).
var batchedResults = regexp.MustCompile(`^results_.*_conc[0-9]+\.json$`)

func stagedKey(b *schema.StagedBenchmark) string {
	p := &b.Point
	return benchmarkKey(p.Config, p.BenchmarkType, p.ISL, p.OSL, p.Conc, p.OffloadMode)
}

// putTraces adds the trace and server log files the traces stage would
// link to each row (rowKeys: the benchmark key of each row id).
func (c *capture) putTraces(s side, rowKeys map[int64]string) {
	sidecars := map[string]*schema.TraceSidecar{}
	for i := range c.traces.Sidecars {
		sidecars[string(c.traces.Sidecars[i].Digest)] = &c.traces.Sidecars[i]
	}
	for _, l := range c.traces.TraceLinks {
		sc, k := sidecars[string(l.Digest)], rowKeys[l.RowID]
		if sc == nil || k == "" {
			continue
		}
		s.put(TableTraces, k, &row{layout: sc.Layout, values: traceValues(sc.Profile, sc.ProfileSize, sc.MetricsJSON,
			sc.MetricsJSONSize, sc.MetricsCSV, sc.MetricsCSVSize, sc.AIPerfJSON, sc.Layout)})
	}
	// A log file's text as stored: the stream its file's bytes were sent
	// as (each distinct file is sent once).
	texts := map[string]*streamSum{}
	for _, t := range c.traces.LogTexts {
		texts[string(t.Digest)] = c.streams[t.Stream]
	}
	bundles := map[string]*schema.ServerLogBundle{}
	for i := range c.traces.Logs {
		bundles[string(c.traces.Logs[i].Digest)] = &c.traces.Logs[i]
	}
	for _, l := range c.traces.LogLinks {
		b, k := bundles[string(l.Digest)], rowKeys[l.RowID]
		if b == nil || k == "" {
			continue
		}
		for _, f := range b.Files {
			v := map[string]any{"text": nil, "size": nil}
			if t := texts[string(f.Text)]; t != nil {
				v["text"], v["size"] = shortDigest(t.h.Sum(nil)), float64(t.size)
			}
			s.put(TableServerLogs, logKey(k, f.Name), &row{group: k, primary: f.Name == b.Primary, values: v,
				bundle: strings.HasPrefix(b.SourceArtifact, multinodeLogsArtifact)})
		}
	}
}

// traceValues are the compared values of a trace: each file's content
// digest (sha256 of its uncompressed bytes) and size; the AIPerf JSON and
// the layout, which the reference does not keep, are dropped against it.
func traceValues(profile []byte, profileSize int64, metricsJSON []byte, metricsJSONSize int64, csv []byte, csvSize int64,
	aiperf []byte, layout string) map[string]any {
	size := func(d []byte, n int64) any {
		if d == nil {
			return nil
		}
		return float64(n)
	}
	return map[string]any{
		"profile_export": shortDigest(profile), "profile_export_size": size(profile, profileSize),
		"server_metrics_json": shortDigest(metricsJSON), "server_metrics_json_size": size(metricsJSON, metricsJSONSize),
		"server_metrics_csv": shortDigest(csv), "server_metrics_csv_size": size(csv, csvSize),
		"profile_aiperf": shortDigest(aiperf), "layout": nilIfEmpty(layout)}
}

// shortDigest is a digest as a compare shows it, nil for none.
func shortDigest(d []byte) any {
	if d == nil {
		return nil
	}
	return "sha256:" + hex.EncodeToString(d[:6])
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
