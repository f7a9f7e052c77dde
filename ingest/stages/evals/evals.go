// Package evals is the evals stage: eval rows of the per-config eval
// directories and the aggregate, and their samples streamed into COPY.
package evals

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/eval"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Writer is what the evals stage needs from the run's transaction.
type Writer interface {
	// StageEvals creates the eval staging tables and stages the eval rows.
	StageEvals(ctx context.Context, rows []schema.StagedEval) error
	// StageEvalSamples streams sample lines into staging with COPY.
	StageEvalSamples(ctx context.Context, next func() (schema.StagedEvalSample, bool, error)) (int64, error)
	// StoredEvalSamples lists the samples files the run's stored eval rows
	// already hold, by eval key.
	StoredEvalSamples(ctx context.Context) (map[schema.EvalKey]schema.EvalSamplesFile, error)
	// ApplyEvals writes what was staged, and records the samples files
	// whose every line was staged.
	ApplyEvals(ctx context.Context, files []schema.EvalSamplesFile) (schema.EvalApplyResult, error)
}

// evalCandidate is one description of an eval row: a task of a per-config
// directory or a row of the aggregate.
type evalCandidate struct {
	row      eval.Row
	artifact *source.Artifact
	record   *runstate.Record
	result   schema.EvalResult
	key      schema.EvalKey
}

// The evals stage's unit is the eval_results row: every task row of a
// per-config directory and every row of the aggregate is one item.
// Per-config directories are read first (newest upload first), then the
// aggregate; the first description of a natural key is staged, later ones
// in this ingest count as duplicates. Samples of the staged per-config
// rows are then streamed into COPY. The stage runs in two halves, Read
// then Rows.Write.

// Read is the stage's first half, which needs no database: it reads the
// eval rows of the per-config directories and the aggregate, resolves their
// configs and counts them. The pipeline runs it while the benchmark rows
// are applied; it touches only its own counters, the failures, the
// unmapped values and the ledger records of the run.
func Read(env *runstate.Env) *Rows {
	dirs, aggs := env.Plan.Artifacts(runstate.KindEval), env.Plan.Artifacts(runstate.KindEvalAggregate)
	if len(dirs) == 0 && len(aggs) == 0 {
		return &Rows{}
	}
	s := &evalStage{env: env, seen: map[schema.EvalKey]bool{}}
	sort.SliceStable(dirs, func(i, j int) bool {
		return runstate.Newer(dirs[i], dirs[j], env.Plan.Inferred)
	})
	for _, a := range dirs {
		s.readDir(a)
	}
	for _, a := range aggs {
		s.readAggregate(a)
	}
	return &Rows{s: s}
}

// Rows is a run's eval rows as Read found them, to be written by Write.
type Rows struct{ s *evalStage }

// Write is the stage's second half: it stages the eval rows read, streams
// their samples files into COPY and applies both. It returns what the
// stage counted, both halves, for the summary.
func (r *Rows) Write(ctx context.Context, w Writer) (schema.Counters, error) {
	s := r.s
	if s == nil {
		return schema.Counters{}, nil
	}
	err := s.write(ctx, w)
	return s.counts, err
}

func (s *evalStage) write(ctx context.Context, w Writer) error {
	env := s.env
	if err := w.StageEvals(ctx, s.staged); err != nil {
		return err
	}
	stored, err := w.StoredEvalSamples(ctx)
	if err != nil {
		return err
	}
	s.stored = stored
	started := time.Now()
	if err := s.stageSamples(ctx, w); err != nil {
		return err
	}
	env.Log.Info("eval samples staged", zap.Int("eval_rows", len(s.staged)), zap.Int("samples_files", len(s.samples)),
		zap.Int64("lines", s.counts.Details.EvalSampleLines), zap.Duration("took", time.Since(started)))
	started = time.Now()
	res, err := w.ApplyEvals(ctx, s.complete)
	if err != nil {
		return err
	}
	if res.Staged != int64(len(s.staged)) {
		return fmt.Errorf("store wrote %d eval rows, the pipeline staged %d", res.Staged, len(s.staged))
	}
	c := &s.counts.Rows.Eval
	c.New += res.New
	c.Duplicate += res.Duplicate
	s.counts.Stats.EvalSamplesNew += res.SamplesNew
	s.counts.Details.EvalRowsUpdated += res.Updated
	s.counts.Details.EvalSampleTextsNew += res.SampleTextsNew
	d := &s.counts.Details
	d.EvalSamplesDuplicate += d.EvalSampleLines - d.EvalSampleLinesFailed - res.SamplesNew
	if res.SamplesReplaced > 0 {
		env.Tally.WriteNote(runstate.Plural(int(res.SamplesReplaced), "eval sample", "eval samples") + runstate.NoteSamplesReplaced)
	}
	env.Log.Info("evals applied", zap.Int64("eval_new", res.New), zap.Int64("samples_staged", res.SamplesStaged),
		zap.Int64("samples_new", res.SamplesNew), zap.Duration("took", time.Since(started)))
	return nil
}

type evalStage struct {
	env *runstate.Env
	// counts are the stage's counters, returned by Rows.Write.
	counts  schema.Counters
	staged  []schema.StagedEval
	samples []*evalCandidate // staged per-config rows with a samples file
	seen    map[schema.EvalKey]bool
	// stored are the samples files the run's rows already hold; complete
	// the files this ingest staged every line of.
	stored   map[schema.EvalKey]schema.EvalSamplesFile
	complete []schema.EvalSamplesFile
	// evidence is the eval evidence of the report (Rows.Evidence).
	evidence []schema.EvalEvidence
}

// failItem counts one eval item that could not be read.
func (s *evalStage) failItem(artifact, file, reason string) {
	s.counts.Details.EvalRows++
	s.counts.Rows.Eval.Failed++
	s.env.Tally.Fail(schema.CategoryEval, artifact, file, reason)
}

// open loads an artifact and starts its ledger record; it reports an
// unreadable artifact as one failed item.
func (s *evalStage) open(a *source.Artifact) (fs.FS, *runstate.Record, bool) {
	fsys, err := a.FS()
	rec := runstate.NewRecord(a)
	*s.env.Records = append(*s.env.Records, rec)
	s.counts.Details.ArtifactsRead++
	for _, p := range a.Problems {
		s.failItem(a.Name, p.File, p.Reason)
	}
	if err != nil {
		s.failItem(a.Name, "", err.Error())
		return nil, rec, false
	}
	return fsys, rec, true
}

func (s *evalStage) readDir(a *source.Artifact) {
	fsys, rec, ok := s.open(a)
	if !ok {
		return
	}
	defer a.Release()
	res := eval.ReadDir(runstate.OpenRecorded(fsys, rec, &s.counts.Details), a.Name, a.Files)
	for _, f := range res.Failures {
		s.failItem(a.Name, f.File, f.Reason)
		if f.Integration {
			s.counts.Details.EvalIntegrationErrors++
			s.evidence = append(s.evidence, schema.EvalEvidence{Task: f.Task, Conc: f.Conc, IntegrationError: f.Reason,
				Artifact: a.Name, File: f.File, Published: []schema.PublishedScore{}})
		}
	}
	for _, r := range res.Rows {
		if q := s.env.Quarantine; q != nil && q.EvalTask(a.Name+"/"+r.File, r.Task) {
			// The producer quarantined this task (rejected_rows_eval_*).
			s.counts.Details.EvalRows++
			s.counts.Rows.Eval.Skipped++
			s.counts.Details.QuarantinedEvalRows++
			s.env.Log.Info("skipped an eval task the producer quarantined", zap.String("artifact", a.Name),
				zap.String("file", r.File), zap.String("task", r.Task))
			continue
		}
		s.add(&evalCandidate{row: r, artifact: a, record: rec})
	}
}

func (s *evalStage) readAggregate(a *source.Artifact) {
	fsys, rec, ok := s.open(a)
	if !ok {
		return
	}
	defer a.Release()
	open := runstate.OpenRecorded(fsys, rec, &s.counts.Details)
	for _, file := range runstate.JSONFiles(a) {
		f, err := open(file)
		if err != nil {
			s.failItem(a.Name, file, fmt.Sprintf("cannot open: %v", err))
			continue
		}
		err = eval.ReadAggregate(f, file,
			func(r eval.Row) { s.add(&evalCandidate{row: r, artifact: a, record: rec}) },
			func(b eval.BadRow) {
				s.failItem(a.Name, file, b.Reason)
				if b.Integration {
					s.counts.Details.EvalIntegrationErrors++
					s.evidence = append(s.evidence, schema.EvalEvidence{IntegrationError: b.Reason, Artifact: a.Name,
						File: file, Published: []schema.PublishedScore{}})
				}
			})
		f.Close()
		if err != nil {
			s.failItem(a.Name, file, err.Error())
		}
	}
}

// add counts one eval item and stages it when it is the first description
// of its key.
func (s *evalStage) add(c *evalCandidate) {
	sum, r := &s.counts, c.row
	counts := &sum.Rows.Eval
	sum.Details.EvalRows++
	if r.SkipReason != "" {
		counts.Skipped++
		s.env.Log.Debug("eval row skipped", zap.String("artifact", c.artifact.Name), zap.String("file", r.File),
			zap.String("task", r.Task), zap.String("reason", r.SkipReason))
		return
	}
	run := s.env.Start.Run
	if r.ISL != nil && r.OSL != nil {
		// The legacy TPU sweep: the same repair as its benchmark rows, so
		// both resolve to one config; dp is kept as the benchmark row keeps it.
		if dp, ok := benchmark.RepairLegacyTPUDeployment(run.SourceRunID, r.Identity, int64(*r.ISL), int64(*r.OSL)); ok {
			r.Metrics["dp"] = float64(dp)
		}
	}
	cfg, out := s.env.Deps.Normalizer.ResolveConfig(r.Identity, r.Agentic)
	switch out.Kind {
	case benchmark.Unmapped:
		counts.Unmapped++
		s.env.Tally.AddUnmappedValues(out.Unmapped)
		return
	case benchmark.Failed:
		counts.Failed++
		s.env.Tally.Fail(schema.CategoryEval, c.artifact.Name, r.File, fmt.Sprintf("task %s: %s", r.Task, out.Reason))
		return
	}
	if r.Conc != nil {
		p := schema.BenchmarkPoint{Config: cfg, BenchmarkType: schema.BenchmarkSingleTurn, ISL: r.ISL, OSL: r.OSL,
			Conc: *r.Conc, OffloadMode: "off"}
		if reason, purged := s.env.Deps.Overrides.PointPurged(run.SourceRunID, run.SourceRunAttempt, &p); purged {
			counts.Skipped++
			s.env.Log.Info("skipped eval of a purged point", zap.String("artifact", c.artifact.Name),
				zap.String("file", r.File), zap.String("task", r.Task), zap.String("reason", reason))
			return
		}
	}
	c.result = schema.EvalResult{Config: cfg, Task: r.Task, ISL: r.ISL, OSL: r.OSL, Conc: r.Conc,
		LMEvalVersion: r.LMEvalVersion, Metrics: r.Metrics}
	c.key = c.result.KeyHash()
	if s.seen[c.key] {
		counts.Duplicate++ // described again in this ingest
		return
	}
	s.seen[c.key] = true
	src := schema.Provenance{Artifact: c.artifact.Name, File: r.File, Row: r.Index}
	if c.artifact.Listing != nil {
		src.ArtifactID = c.artifact.Listing.ID
	}
	s.staged = append(s.staged, schema.StagedEval{Result: c.result, Key: c.key, Source: src})
	s.evidence = append(s.evidence, evidenceOf(c.result, r.Decoding))
	if r.SamplesFile != "" {
		s.samples = append(s.samples, c)
	}
}

// maxSentTexts bounds the set of documents and prompts a sample worker
// remembers having sent (a task's documents, the same for every config);
// past it the set starts over, and the database deduplicates what is sent
// again. Model outputs are not remembered: only the filter lines of one
// document, which follow each other, share them. Memory therefore stays
// flat however many and however large the samples files are.
const maxSentTexts = 1 << 14

// maxSampleWorkers bounds the goroutines parsing samples files.
const maxSampleWorkers = 4

// stageSamples streams the samples files of the staged rows into COPY,
// parsed by a few workers (one file each at a time, so a file's lines keep
// their order).
func (s *evalStage) stageSamples(ctx context.Context, w Writer) error {
	if len(s.samples) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.env.Deps.Expect("samples files", int64(len(s.samples)))
	// One job per artifact: its FS is opened and released by one worker.
	var groups [][]*evalCandidate
	for i, c := range s.samples {
		if i == 0 || s.samples[i-1].artifact != c.artifact {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], c)
	}
	out := make(chan schema.StagedEvalSample, 64) // lines carry KBs of text: keep few in flight
	jobs := make(chan []*evalCandidate)
	workers := min(runtime.GOMAXPROCS(0), maxSampleWorkers, len(groups))
	results := make([]*sampleWorker, workers)
	var wg sync.WaitGroup
	for i := range results {
		sw := &sampleWorker{reader: eval.NewSampleReader(), sent: map[[32]byte]struct{}{}, stored: s.stored, advance: s.env.Deps.Advance}
		results[i] = sw
		wg.Go(func() {
			for g := range jobs {
				if sw.err == nil {
					sw.err = sw.readArtifact(ctx, g, out)
				}
			}
		})
	}
	go func() {
		defer close(out)
	feed:
		for _, g := range groups {
			select {
			case jobs <- g:
			case <-ctx.Done():
				break feed
			}
		}
		close(jobs)
		wg.Wait()
	}()
	_, copyErr := w.StageEvalSamples(ctx, func() (schema.StagedEvalSample, bool, error) {
		select {
		case r, ok := <-out:
			return r, ok, nil
		case <-ctx.Done():
			return schema.StagedEvalSample{}, false, ctx.Err()
		}
	})
	cancel()
	for range out { // let the workers finish
	}
	if copyErr != nil {
		return copyErr
	}
	// Merge in the order the files were given, not the order workers ran.
	byFile := map[*evalCandidate]*sampleFileResult{}
	for _, sw := range results {
		if sw.err != nil {
			return sw.err
		}
		for _, r := range sw.files {
			byFile[r.c] = r
		}
	}
	d := &s.counts.Details
	for _, c := range s.samples {
		r := byFile[c]
		if r == nil {
			continue
		}
		c.record.AddFile(c.row.SamplesFile, r.digest, r.bytes)
		d.FilesRead++
		d.BytesRead += r.bytes
		d.EvalSampleFiles++
		d.EvalSampleLines += int64(r.stats.Lines)
		if r.unchanged {
			d.EvalSampleFilesUnchanged++
			d.EvalSampleFilesRecorded++
			continue
		}
		if r.failed != "" {
			d.EvalSampleFilesFailed++
			s.env.Tally.Fail(schema.CategoryEvalSamples, c.artifact.Name, c.row.SamplesFile, r.failed)
			continue
		}
		if r.stats.Bad > 0 {
			d.EvalSampleLinesFailed += int64(r.stats.Bad)
			s.env.Tally.Fail(schema.CategoryEvalSamples, c.artifact.Name, c.row.SamplesFile, r.stats.Summary())
			continue // read again next time, so the failure is reported again
		}
		s.complete = append(s.complete, schema.EvalSamplesFile{Eval: c.key, File: c.row.SamplesFile, Lines: r.stats.Lines, Digest: r.digest})
		d.EvalSampleFilesRecorded++ // qRecordSamplesFiles: every key is staged, once
	}
	return nil
}

// sampleWorker parses samples files for stageSamples.
type sampleWorker struct {
	reader *eval.SampleReader
	sent   map[[32]byte]struct{}
	// lastResps is the digest of the model outputs of the previous line.
	lastResps [32]byte
	stored    map[schema.EvalKey]schema.EvalSamplesFile
	files     []*sampleFileResult
	err       error
	// advance counts samples files done on the run's progress.
	advance func(n int64)
}

type sampleFileResult struct {
	c      *evalCandidate
	stats  eval.SampleStats
	digest [sha256.Size]byte
	bytes  int64
	failed string
	// unchanged: the row already holds this very file; it was hashed, not
	// parsed.
	unchanged bool
}

// readArtifact streams the samples files of one artifact's rows to out.
func (sw *sampleWorker) readArtifact(ctx context.Context, g []*evalCandidate, out chan<- schema.StagedEvalSample) error {
	a := g[0].artifact
	fsys, err := a.FS()
	if err != nil {
		for _, c := range g {
			sw.files = append(sw.files, &sampleFileResult{c: c, failed: err.Error()})
		}
		sw.advance(int64(len(g)))
		return nil
	}
	defer a.Release()
	for _, c := range g {
		if err := sw.read(ctx, fsys, c, out); err != nil {
			return err
		}
	}
	return nil
}

// read streams one samples file to out. A file that cannot be opened or
// read is reported, not fatal; only cancellation is.
func (sw *sampleWorker) read(ctx context.Context, fsys fs.FS, c *evalCandidate, out chan<- schema.StagedEvalSample) error {
	res := &sampleFileResult{c: c}
	sw.files = append(sw.files, res)
	defer sw.advance(1)
	if st, ok := sw.stored[c.key]; ok && st.File == c.row.SamplesFile && sw.unchanged(fsys, st, res) {
		return nil
	}
	f, err := fsys.Open(c.row.SamplesFile)
	if err != nil {
		res.failed = fmt.Sprintf("cannot open: %v", err)
		return nil
	}
	defer f.Close()
	dr := runstate.NewDigestReader(f)
	var stop error
	res.stats, err = sw.reader.ReadSamples(dr, func(smp *eval.Sample) error {
		st := schema.StagedEvalSample{Eval: c.key, DocID: smp.DocID, Filter: smp.Filter,
			Target: smp.Target, Response: smp.Response, Score: smp.Score, Passed: smp.Passed,
			Metrics: smp.Metrics, FilteredResps: smp.FilteredResps, Data: smp.Data,
			File: c.row.SamplesFile, Line: smp.Line}
		st.Doc, st.DocSent = sw.text(smp.Doc)
		st.Prompt, st.PromptSent = sw.text(smp.Prompt)
		st.Resps, st.RespsSent = sw.outputs(smp.Resps)
		select {
		case out <- st:
			return nil
		case <-ctx.Done():
			stop = ctx.Err()
			return stop
		}
	})
	if stop != nil {
		return stop
	}
	if err != nil {
		res.failed = err.Error()
	}
	_, _ = io.Copy(io.Discard, dr)
	res.digest, res.bytes = dr.Digest(), dr.N
	return nil
}

// unchanged hashes a samples file the row already holds a digest of; when
// they match, the file is recorded without being parsed.
func (sw *sampleWorker) unchanged(fsys fs.FS, st schema.EvalSamplesFile, res *sampleFileResult) bool {
	f, err := fsys.Open(st.File)
	if err != nil {
		return false
	}
	defer f.Close()
	dr := runstate.NewDigestReader(f)
	if _, err := io.Copy(io.Discard, dr); err != nil {
		return false
	}
	if dr.Digest() != st.Digest {
		return false
	}
	res.unchanged, res.digest, res.bytes = true, st.Digest, dr.N
	res.stats = eval.SampleStats{Lines: st.Lines, Good: st.Lines}
	return true
}

// outputs converts a line's model outputs and says whether the previous
// line (another filter of the same document) sent them.
func (sw *sampleWorker) outputs(t *eval.Text) (*schema.EvalText, bool) {
	if t == nil {
		return nil, false
	}
	sent := t.Digest == sw.lastResps
	sw.lastResps = t.Digest
	return &schema.EvalText{Kind: t.Kind, Digest: t.Digest, Content: t.Content}, sent
}

// text converts a sample text and says whether this worker sent it before.
func (sw *sampleWorker) text(t *eval.Text) (*schema.EvalText, bool) {
	if t == nil {
		return nil, false
	}
	_, sent := sw.sent[t.Digest]
	if !sent {
		if len(sw.sent) >= maxSentTexts {
			clear(sw.sent)
		}
		sw.sent[t.Digest] = struct{}{}
	}
	return &schema.EvalText{Kind: t.Kind, Digest: t.Digest, Content: t.Content}, sent
}
