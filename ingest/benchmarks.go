package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/schema"
)

// benchmarkStage reads every benchmark file of the plan, normalizes its
// rows and hands the good ones to the store. It owns the benchmark counters
// of the summary while it runs.
type benchmarkStage struct {
	deps    Deps
	run     schema.RunIdentity
	tally   *tally
	reader  *benchmark.Reader
	records []*artifactRecord
	staged  int64
}

// maxParseWorkers bounds the goroutines parsing benchmark files.
const maxParseWorkers = 4

// stream sends every stageable row to out and closes it. Artifacts are
// parsed by a few workers, each with its own counters, merged at the end
// in a deterministic order. It returns only fatal errors (cancellation);
// bad input is counted and reported.
func (s *benchmarkStage) stream(ctx context.Context, p plan, out chan<- schema.StagedBenchmark) error {
	defer close(out)
	workers := min(runtime.GOMAXPROCS(0), maxParseWorkers, max(len(p.benchmark), 1))
	parts := make([]*benchmarkStage, workers)
	errs := make([]error, workers)
	jobs := make(chan plannedArtifact)
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = s.fork()
		wg.Add(1)
		go func(w *benchmarkStage, errp *error) {
			defer wg.Done()
			for pa := range jobs {
				if *errp != nil {
					continue // drain
				}
				*errp = w.readArtifact(ctx, pa, out)
			}
		}(parts[i], &errs[i])
	}
feed:
	for _, pa := range p.benchmark {
		select {
		case jobs <- pa:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for _, w := range parts {
		s.merge(w)
	}
	s.sortOutputs()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// fork returns a worker with its own counters and buffers.
func (s *benchmarkStage) fork() *benchmarkStage {
	return &benchmarkStage{deps: s.deps, run: s.run, tally: newTally(&schema.Summary{}), reader: benchmark.NewReader()}
}

// merge adds a worker's counters, failures, unmapped values and records.
func (s *benchmarkStage) merge(w *benchmarkStage) {
	dst, src := s.tally.sum, w.tally.sum
	addCounts(&dst.Rows.Benchmark, src.Rows.Benchmark)
	dst.Stats.BenchmarkFiles += src.Stats.BenchmarkFiles
	dst.Stats.RawBenchmarkRows += src.Stats.RawBenchmarkRows
	dst.Stats.FailedRunRows += src.Stats.FailedRunRows
	dst.Stats.PurgedPoints += src.Stats.PurgedPoints
	dst.Details.ArtifactsRead += src.Details.ArtifactsRead
	dst.Details.FilesRead += src.Details.FilesRead
	dst.Details.BytesRead += src.Details.BytesRead
	dst.Details.MissingIdentityRows += src.Details.MissingIdentityRows
	for _, f := range src.Failures {
		s.tally.fail(f.Category, f.Artifact, f.File, f.Reason)
	}
	s.tally.droppedFails += w.tally.droppedFails
	for kind, set := range w.tally.unmapped {
		for v := range set {
			s.tally.addUnmapped(kind, v)
		}
	}
	for k := range w.tally.unknownMetrics {
		s.tally.unknownMetrics[k] = struct{}{}
	}
	s.records = append(s.records, w.records...)
	s.staged += w.staged
}

// sortOutputs puts records and benchmark failures in artifact order, so the
// summary does not depend on which worker read what.
func (s *benchmarkStage) sortOutputs() {
	sort.SliceStable(s.records, func(i, j int) bool { return s.records[i].Name < s.records[j].Name })
	f := s.tally.sum.Failures
	sort.SliceStable(f, func(i, j int) bool {
		if f[i].Category != f[j].Category {
			return f[i].Category == schema.CategoryRun
		}
		if f[i].Artifact != f[j].Artifact {
			return f[i].Artifact < f[j].Artifact
		}
		return f[i].File < f[j].File
	})
}

func addCounts(dst *schema.Counts, src schema.Counts) {
	dst.New += src.New
	dst.Duplicate += src.Duplicate
	dst.Skipped += src.Skipped
	dst.Unmapped += src.Unmapped
	dst.Failed += src.Failed
}

func (s *benchmarkStage) readArtifact(ctx context.Context, pa plannedArtifact, out chan<- schema.StagedBenchmark) error {
	a := pa.artifact
	sum := s.tally.sum
	rec := newArtifactRecord(a)
	s.records = append(s.records, rec)
	sum.Details.ArtifactsRead++
	defer a.Release()
	itemFailed := func(file, reason string) {
		sum.Stats.BenchmarkFiles++
		sum.Stats.RawBenchmarkRows++
		sum.Rows.Benchmark.Failed++
		s.tally.fail(schema.CategoryBenchmark, a.Name, file, reason)
	}
	for _, p := range a.Problems {
		itemFailed(p.File, p.Reason)
	}
	if a.Err != nil {
		itemFailed("", a.Err.Error())
		return nil
	}
	fsys, err := a.FS()
	if err != nil {
		itemFailed("", err.Error())
		return nil
	}
	for _, file := range benchmarkFiles(a) {
		if err := s.readFile(ctx, pa, fsys, file, rec, out); err != nil {
			return err
		}
	}
	return nil
}

func (s *benchmarkStage) readFile(ctx context.Context, pa plannedArtifact, fsys fs.FS, file string, rec *artifactRecord, out chan<- schema.StagedBenchmark) error {
	a := pa.artifact
	sum := s.tally.sum
	counts := &sum.Rows.Benchmark
	sum.Stats.BenchmarkFiles++
	sum.Details.FilesRead++
	f, err := fsys.Open(file)
	if err != nil {
		sum.Stats.RawBenchmarkRows++
		counts.Failed++
		s.tally.fail(schema.CategoryBenchmark, a.Name, file, fmt.Sprintf("cannot open: %v", err))
		return nil
	}
	defer f.Close()
	dr := newDigestReader(f)
	shape := benchmark.ObjectOrArray
	if pa.aggregate {
		shape = benchmark.ArrayOnly
	}
	var fatal error
	_, ferr := s.reader.ReadRows(dr, shape, func(index int, row map[string]any, rerr error) error {
		sum.Stats.RawBenchmarkRows++
		if rerr != nil {
			counts.Failed++
			s.tally.fail(schema.CategoryBenchmark, a.Name, file, rerr.Error())
			return nil
		}
		staged, ok := s.normalize(a.Name, file, index, row)
		if !ok {
			return nil
		}
		staged.IsAggregate, staged.AttemptRank = pa.aggregate, pa.rank
		if a.Listing != nil {
			staged.Source.ArtifactID = a.Listing.ID
		}
		select {
		case out <- staged:
			s.staged++
			return nil
		case <-ctx.Done():
			fatal = ctx.Err()
			return fatal
		}
	})
	if fatal != nil {
		return fatal
	}
	if ferr != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(ferr, cerr) {
			return cerr
		}
		sum.Stats.RawBenchmarkRows++
		counts.Failed++
		s.tally.fail(schema.CategoryBenchmark, a.Name, file, ferr.Error())
	}
	// Hash the whole file even when reading stopped early.
	if _, err := io.Copy(io.Discard, dr); err != nil {
		s.deps.Log.Debug("finish file digest", zap.String("artifact", a.Name), zap.String("file", file), zap.Error(err))
	}
	sum.Details.BytesRead += dr.n
	rec.Files = append(rec.Files, fileRecord{Path: file, SHA256: dr.sum(), Bytes: dr.n})
	return nil
}

// normalize maps one row and counts its outcome; it returns the row to
// stage when it is good.
func (s *benchmarkStage) normalize(artifact, file string, index int, row map[string]any) (schema.StagedBenchmark, bool) {
	sum := s.tally.sum
	counts := &sum.Rows.Benchmark
	point, out := s.deps.Normalizer.Normalize(row)
	switch out.Kind {
	case benchmark.Failed:
		counts.Failed++
		s.tally.fail(schema.CategoryBenchmark, artifact, file, fmt.Sprintf("row %d: %s", index, out.Reason))
		return schema.StagedBenchmark{}, false
	case benchmark.Unmapped:
		counts.Unmapped++
		s.tally.addUnmappedValues(out.Unmapped)
		return schema.StagedBenchmark{}, false
	case benchmark.Skipped:
		counts.Skipped++
		switch out.SkipReason {
		case benchmark.SkipFailedRun:
			sum.Stats.FailedRunRows++
		case benchmark.SkipMissingIdentity:
			sum.Details.MissingIdentityRows++
		}
		return schema.StagedBenchmark{}, false
	}
	if reason, purged := s.deps.Overrides.PointPurged(s.run.SourceRunID, s.run.SourceRunAttempt, &point); purged {
		counts.Skipped++
		sum.Stats.PurgedPoints++
		s.deps.Log.Info("skipped purged benchmark point", zap.String("artifact", artifact), zap.String("file", file),
			zap.Int("row", index), zap.String("reason", reason))
		return schema.StagedBenchmark{}, false
	}
	for _, k := range out.UnknownMetrics {
		s.tally.unknownMetrics[k] = struct{}{}
	}
	return schema.StagedBenchmark{Point: point, Source: schema.Provenance{Artifact: artifact, File: file, Row: index}}, true
}
