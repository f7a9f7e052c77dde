package ingest

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"runtime"
	"sort"
	"sync"
	"time"

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
	// seed keys the hashes of this run.
	seed maphash.Seed
	// owns collects what a per-job worker staged; covered holds what
	// per-job files own, for aggregate workers.
	owns, covered *coverage
}

// coverage is what per-job files own: the points they staged, and the
// content of the rows that staged them (an aggregate row with the same
// content is covered without being decoded).
type coverage struct {
	points, contents map[pointHash]struct{}
}

func newCoverage() *coverage {
	return &coverage{points: map[pointHash]struct{}{}, contents: map[pointHash]struct{}{}}
}

func (c *coverage) add(o *coverage) {
	for h := range o.points {
		c.points[h] = struct{}{}
	}
	for h := range o.contents {
		c.contents[h] = struct{}{}
	}
}

// maxParseWorkers bounds the goroutines parsing benchmark files; there are
// twice as many as CPUs, as much of the per-file work waits on syscalls.
const maxParseWorkers = 4

// pointHash is a 128-bit hash of a point key; the pipeline remembers the
// points per-job files own by hash, not by key, to keep memory small.
type pointHash [2]uint64

// stream sends every stageable row to out and closes it. Per-job artifacts
// are read first, then aggregates: an aggregate row whose point a per-job
// row already owns is counted as covered right here and never sent to the
// database. Each phase runs a few workers with their own counters, merged
// in a deterministic order. It returns only fatal errors (cancellation);
// bad input is counted and reported.
func (s *benchmarkStage) stream(ctx context.Context, p plan, out chan<- schema.StagedBenchmark) error {
	defer close(out)
	var perJob, aggregates []plannedArtifact
	for _, pa := range p.benchmark {
		if pa.aggregate {
			aggregates = append(aggregates, pa)
		} else {
			perJob = append(perJob, pa)
		}
	}
	owned := newCoverage()
	started := time.Now()
	if err := s.phase(ctx, perJob, out, owned, nil); err != nil {
		return err
	}
	s.deps.Log.Debug("per-job benchmark files read", zap.Int("artifacts", len(perJob)), zap.Duration("took", time.Since(started)))
	started = time.Now()
	err := s.phase(ctx, aggregates, out, nil, owned)
	s.deps.Log.Debug("aggregate benchmark files read", zap.Int("artifacts", len(aggregates)), zap.Duration("took", time.Since(started)))
	s.sortOutputs()
	return err
}

// phase reads artifacts with a pool of workers. Rows staged are added to
// own (when set); rows whose point is in covered (when set) are counted as
// covered instead of staged.
func (s *benchmarkStage) phase(ctx context.Context, arts []plannedArtifact, out chan<- schema.StagedBenchmark, own, covered *coverage) error {
	workers := min(2*runtime.GOMAXPROCS(0), maxParseWorkers, max(len(arts), 1))
	parts := make([]*benchmarkStage, workers)
	errs := make([]error, workers)
	jobs := make(chan plannedArtifact)
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = s.fork(covered, own != nil)
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
	for _, pa := range arts {
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
		if own != nil {
			own.add(w.owns)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// fork returns a worker with its own counters and buffers. A worker of the
// per-job phase records the points it stages; one of the aggregate phase
// checks them.
func (s *benchmarkStage) fork(covered *coverage, recordOwned bool) *benchmarkStage {
	w := &benchmarkStage{deps: s.deps, run: s.run, tally: newTally(&schema.Summary{}), reader: benchmark.NewReader(),
		covered: covered, seed: s.seed}
	if recordOwned {
		w.owns = newCoverage()
	}
	return w
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
	dst.Stats.CoveredByPerJobFiles += src.Stats.CoveredByPerJobFiles
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

// hash is the 128-bit hash of a point key.
func (s *benchmarkStage) hash(key string) pointHash {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(key)
	return sum128(&h)
}

// hashBytes is the 128-bit hash of a row's compact content.
func (s *benchmarkStage) hashBytes(b []byte) pointHash {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.Write(b)
	return sum128(&h)
}

func sum128(h *maphash.Hash) pointHash {
	a := h.Sum64()
	h.WriteByte(0x9e)
	return pointHash{a, h.Sum64()}
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
	fsys, fsErr := a.FS() // indexes and opens the artifact, in this worker
	rec := newArtifactRecord(a)
	s.records = append(s.records, rec)
	sum.Details.ArtifactsRead++
	defer rec.seal()
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
	if fsErr != nil {
		itemFailed("", fsErr.Error())
		return nil
	}
	for _, file := range jsonFiles(a) {
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
	if ce := s.deps.Log.Check(zap.DebugLevel, "benchmark file"); ce != nil {
		ce.Write(zap.String("artifact", a.Name), zap.String("file", file))
	}
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
	_, ferr := s.reader.ReadElements(dr, shape, func(e *benchmark.Element) error {
		sum.Stats.RawBenchmarkRows++
		content := s.hashBytes(e.Raw) // Raw is compact: indentation does not matter
		if s.covered != nil {
			if _, ok := s.covered.contents[content]; ok {
				counts.Skipped++
				sum.Stats.CoveredByPerJobFiles++
				return nil
			}
		}
		row, rerr := e.Decode()
		if rerr != nil {
			counts.Failed++
			s.tally.fail(schema.CategoryBenchmark, a.Name, file, rerr.Error())
			return nil
		}
		// Legacy rows: lengths stated only by the file or artifact name,
		// and the one run published with a wrong TPU chip count.
		benchmark.FillISLOSLFromNames(row, file, a.Name)
		benchmark.RepairLegacyTPURow(s.run.SourceRunID, row)
		staged, ok := s.normalize(a.Name, file, e.Index, row)
		if !ok {
			return nil
		}
		if s.owns != nil {
			s.owns.contents[content] = struct{}{}
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
	rec.addFile(file, dr.sum(), dr.n)
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
	key := point.Key()
	h := s.hash(key)
	if s.covered != nil {
		if _, ok := s.covered.points[h]; ok {
			counts.Skipped++
			sum.Stats.CoveredByPerJobFiles++
			return schema.StagedBenchmark{}, false
		}
	}
	if s.owns != nil {
		s.owns.points[h] = struct{}{}
	}
	for _, k := range out.UnknownMetrics {
		s.tally.unknownMetrics[k] = struct{}{}
	}
	return schema.StagedBenchmark{Point: point, Key: key, Source: schema.Provenance{Artifact: artifact, File: file, Row: index}}, true
}
