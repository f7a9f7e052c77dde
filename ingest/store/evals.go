package store

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// StageEvals creates the run's eval staging tables and copies the eval
// rows into them. Call it once per run, before StageEvalSamples.
func (t *RunTx) StageEvals(ctx context.Context, rows []schema.StagedEval) error {
	b := &pgx.Batch{}
	b.Queue(qCreateEvalStaging)
	b.Queue(qCreateSampleStaging)
	b.Queue(qCreateEvalIDs)
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return t.explain("create eval staging tables", err)
	}
	t.evalsStaged = true
	if len(rows) == 0 {
		return nil
	}
	var buf []byte
	i := 0
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"stage_eval"}, evalStagingColumns, pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(rows) {
			return nil, nil
		}
		r := rows[i]
		i++
		var vals []any
		var err error
		vals, buf, err = evalValues(r, t.run.Date, buf)
		return vals, err
	}))
	if err != nil {
		return t.explain("stage eval rows", err)
	}
	return nil
}

// evalValues lays an eval row out in evalStagingColumns order.
func evalValues(r schema.StagedEval, date string, buf []byte) ([]any, []byte, error) {
	e, c := &r.Result, r.Result.Config
	metrics, err := encodeMetrics(buf[:0], e.Metrics)
	if err != nil {
		return nil, buf, fmt.Errorf("artifact %s: file %s: row %d: encode metrics: %w", r.Source.Artifact, r.Source.File, r.Source.Row, err)
	}
	version := cleanOptText(e.LMEvalVersion)
	h := sha256.New()
	h.Write(r.Key[:])
	h.Write([]byte{0})
	h.Write([]byte(date))
	h.Write([]byte{0})
	if version != nil {
		h.Write([]byte("v" + *version))
	}
	h.Write([]byte{0})
	h.Write(metrics)
	d := h.Sum(nil)[:16]
	var artifactID *int64
	if r.Source.ArtifactID != 0 {
		id := r.Source.ArtifactID
		artifactID = &id
	}
	return []any{
		r.Key[:],
		c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod, c.Disagg, c.IsMultinode,
		int16(c.PrefillTP), int16(c.PrefillEP), c.PrefillDPAttention, int16(c.PrefillNumWorkers),
		int16(c.DecodeTP), int16(c.DecodeEP), c.DecodeDPAttention, int16(c.DecodeNumWorkers),
		int16(c.NumPrefillGPU), int16(c.NumDecodeGPU),
		cleanText(e.Task), e.ISL, e.OSL, e.Conc, version, append([]byte(nil), metrics...), d,
		cleanText(r.Source.Artifact), artifactID, cleanText(r.Source.File), int32(r.Source.Row),
	}, metrics, nil
}

// StageEvalSamples streams sample lines into the staging table with COPY,
// calling next until it reports no more; parsing runs while PostgreSQL
// receives earlier lines. It returns how many lines were staged.
func (t *RunTx) StageEvalSamples(ctx context.Context, next func() (schema.StagedEvalSample, bool, error)) (int64, error) {
	if !t.evalsStaged {
		return 0, fmt.Errorf("stage eval samples: StageEvals was not called")
	}
	src := &sampleSource{next: next}
	n, err := t.tx.CopyFrom(ctx, pgx.Identifier{"stage_eval_sample"}, sampleStagingColumns, src)
	if err != nil {
		return n, t.explain("stage eval samples", err)
	}
	return n, nil
}

type sampleSource struct {
	next   func() (schema.StagedEvalSample, bool, error)
	seq    int64
	values []any
	err    error
}

func (s *sampleSource) Next() bool {
	r, ok, err := s.next()
	if err != nil {
		s.err = err
		return false
	}
	if !ok {
		return false
	}
	s.seq++
	doc, docText := textValues(r.Doc, r.DocSent)
	prompt, promptText := textValues(r.Prompt, r.PromptSent)
	resps, respsText := textValues(r.Resps, r.RespsSent)
	s.values = []any{
		s.seq, r.Eval[:], int32(r.DocID), cleanText(r.Filter),
		doc, docText, prompt, promptText, resps, respsText,
		cleanOptText(r.Target), cleanOptText(r.Response), r.Passed, r.Score,
		nilIfEmpty(r.Metrics), nilIfEmpty(r.FilteredResps), nilIfEmpty(r.Data),
		cleanText(r.File), int32(r.Line),
	}
	return true
}

func (s *sampleSource) Values() ([]any, error) { return s.values, nil }

func (s *sampleSource) Err() error { return s.err }

// textValues is a text's digest, and its content unless it was sent before.
func textValues(t *schema.EvalText, sent bool) (digest []byte, content *string) {
	if t == nil {
		return nil, nil
	}
	d := t.Digest
	if sent {
		return d[:], nil
	}
	c := cleanText(t.Content)
	return d[:], &c
}

// StoredEvalSamples lists the samples files the run's stored eval rows
// hold, by eval key, so a rerun can skip files it already stored.
func (t *RunTx) StoredEvalSamples(ctx context.Context) (map[schema.EvalKey]schema.EvalSamplesFile, error) {
	rows, err := t.tx.Query(ctx, qStoredSamplesFiles, t.run.WorkflowRunID)
	if err != nil {
		return nil, t.explain("read stored samples files", err)
	}
	defer rows.Close()
	out := map[schema.EvalKey]schema.EvalSamplesFile{}
	for rows.Next() {
		var e schema.EvalResult
		c := &e.Config
		var isl, osl, conc *int32
		var file string
		var digest []byte
		var lines int32
		if err := rows.Scan(append(c.KeyFields(), &e.Task, &isl, &osl, &conc, &file, &digest, &lines)...); err != nil {
			return nil, t.explain("read stored samples files", err)
		}
		e.ISL, e.OSL, e.Conc = intPtr(isl), intPtr(osl), intPtr(conc)
		f := schema.EvalSamplesFile{Eval: e.KeyHash(), File: file, Lines: int(lines)}
		copy(f.Digest[:], digest)
		out[f.Eval] = f
	}
	if err := rows.Err(); err != nil {
		return nil, t.explain("read stored samples files", err)
	}
	return out, nil
}

func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	x := int(*v)
	return &x
}

// ApplyEvals writes the staged evals in one round trip: their configs, the
// eval rows, then the sample texts not stored yet, the sample lines, and
// the samples files whose every line was staged.
func (t *RunTx) ApplyEvals(ctx context.Context, files []schema.EvalSamplesFile) (schema.EvalApplyResult, error) {
	var r schema.EvalApplyResult
	if !t.evalsStaged {
		return r, fmt.Errorf("apply evals: StageEvals was not called")
	}
	keys, names, digests, lines := make([][]byte, len(files)), make([]string, len(files)), make([][]byte, len(files)), make([]int32, len(files))
	for i, f := range files {
		k, d := f.Eval, f.Digest
		keys[i], names[i], digests[i], lines[i] = k[:], cleanText(f.File), d[:], int32(f.Lines)
	}
	b := &pgx.Batch{}
	b.Queue(qMatchAdoptedEvals, t.run.WorkflowRunID)
	b.Queue(qInsertEvalConfigs)
	b.Queue(qUpsertEvals, t.run.WorkflowRunID, t.run.Date, t.run.IngestID)
	b.Queue(qEvalIDs, t.run.WorkflowRunID)
	b.Queue(qInsertSampleTexts)
	b.Queue(qDropReplacedSamples, keys, digests)
	b.Queue(qInsertSamples, t.run.IngestID)
	b.Queue(`SELECT count(*) FROM stage_eval_sample`)
	b.Queue(qRecordSamplesFiles, keys, names, digests, lines)
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if _, err := res.Exec(); err != nil {
		return r, t.explain("match adopted eval rows", err)
	}
	if _, err := res.Exec(); err != nil {
		return r, t.explain("write eval configs", err)
	}
	if err := res.QueryRow().Scan(&r.Staged, &r.New, &r.Updated); err != nil {
		return r, t.explain("write eval results", err)
	}
	r.Duplicate = r.Staged - r.New
	if _, err := res.Exec(); err != nil {
		return r, t.explain("map eval ids", err)
	}
	tag, err := res.Exec()
	if err != nil {
		return r, t.explain("write eval sample texts", err)
	}
	r.SampleTextsNew = tag.RowsAffected()
	if tag, err = res.Exec(); err != nil {
		return r, t.explain("drop replaced eval samples", err)
	}
	r.SamplesReplaced = tag.RowsAffected()
	if tag, err = res.Exec(); err != nil {
		return r, t.explain("write eval samples", err)
	}
	r.SamplesNew = tag.RowsAffected()
	if err := res.QueryRow().Scan(&r.SamplesStaged); err != nil {
		return r, t.explain("count staged eval samples", err)
	}
	if tag, err = res.Exec(); err != nil {
		return r, t.explain("record samples files", err)
	}
	r.SamplesFilesRecorded = tag.RowsAffected()
	if err := res.Close(); err != nil {
		return r, t.explain("apply evals", err)
	}
	return r, nil
}
