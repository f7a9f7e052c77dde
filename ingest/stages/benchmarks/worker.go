package benchmarks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"strings"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/ingest/receipt"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// parseWorker reads whole artifacts for the benchmark stage, with its own
// reader, counters and records, which the stage merges when a phase ends.
type parseWorker struct {
	deps    runstate.Deps
	run     schema.RunIdentity
	headSHA string
	tally   *runstate.Tally
	reader  *benchmark.Reader
	records []*runstate.Record
	staged  int64
	seed    maphash.Seed
	// owns collects what a per-job worker staged; covered holds what
	// per-job files own, for aggregate workers.
	owns, covered *coverage
	// agentx is what the traces stage needs of the rows: dataset slugs
	// (every raw row) and the unmapped per-job AgentX rows.
	agentx runstate.AgentX
	// quarantine lists the per-job files the producer quarantined.
	quarantine *quarantine.Lists
	// evidence: execution records a receipt names, by artifact.
	evidence map[string]map[string]bool
	// notRead: files of the artifacts read that hold no rows.
	notRead []string
	// ids: the stage's staged identities (nil: no point backfills).
	ids *identities
}

// hash is the 128-bit hash of a point key.
func (s *parseWorker) hash(key string) pointHash {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(key)
	return sum128(&h)
}

// hashBytes is the 128-bit hash of a row's compact content.
func (s *parseWorker) hashBytes(b []byte) pointHash {
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

func (s *parseWorker) readArtifact(ctx context.Context, pa runstate.Planned, out chan<- schema.StagedBenchmark) error {
	a := pa.Artifact
	sum := s.tally.Summary()
	fsys, fsErr := a.FS() // indexes and opens the artifact, in this worker
	rec := runstate.NewRecord(a)
	s.records = append(s.records, rec)
	sum.Details.ArtifactsRead++
	defer rec.Seal()
	defer a.Release()
	itemFailed := func(file, reason string) {
		sum.Stats.BenchmarkFiles++
		s.deps.Advance(1)
		sum.Stats.RawBenchmarkRows++
		sum.Rows.Benchmark.Failed++
		s.tally.Fail(schema.CategoryBenchmark, a.Name, file, reason)
	}
	for _, p := range a.Problems {
		itemFailed(p.File, p.Reason)
	}
	if fsErr != nil {
		itemFailed("", fsErr.Error())
		return nil
	}
	files, others := runstate.BenchmarkFiles(a)
	for _, file := range files {
		if receipt.IsExecutionRecord(file, s.evidence[a.Name]) {
			sum.Details.ExecutionRecords++ // evidence of how the point ran, never a row
			continue
		}
		if err := s.readFile(ctx, pa, fsys, file, rec, out); err != nil {
			return err
		}
	}
	for _, file := range others {
		sum.Details.BenchmarkFilesNotRead++
		s.notRead = append(s.notRead, a.Name+"/"+file)
	}
	return nil
}

func (s *parseWorker) readFile(ctx context.Context, pa runstate.Planned, fsys fs.FS, file string, rec *runstate.Record, out chan<- schema.StagedBenchmark) error {
	a := pa.Artifact
	sum := s.tally.Summary()
	counts := &sum.Rows.Benchmark
	sum.Stats.BenchmarkFiles++
	s.deps.Advance(1)
	sum.Details.FilesRead++
	if ce := s.deps.Log.Check(zap.DebugLevel, "benchmark file"); ce != nil {
		ce.Write(zap.String("artifact", a.Name), zap.String("file", file))
	}
	if !pa.Aggregate && s.quarantine != nil && s.quarantine.Listed(a.Name+"/"+file) && s.quarantined(fsys, a.Name, file, rec) {
		return nil
	}
	f, err := fsys.Open(file)
	if err != nil {
		sum.Stats.RawBenchmarkRows++
		counts.Failed++
		s.tally.Fail(schema.CategoryBenchmark, a.Name, file, fmt.Sprintf("cannot open: %v", err))
		return nil
	}
	defer f.Close()
	dr := runstate.NewDigestReader(&eofReader{r: f})
	shape := benchmark.ObjectOrArray
	if pa.Aggregate {
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
			s.tally.Fail(schema.CategoryBenchmark, a.Name, file, rerr.Error())
			return nil
		}
		if slug, ok := trace.DatasetSlug(row); ok {
			s.agentx.AddSlug(slug, a.Name+"/"+file)
		}
		// Legacy rows: lengths stated only by the file or artifact name,
		// and the one run published with a wrong TPU chip count.
		benchmark.FillISLOSLFromNames(row, file, a.Name)
		benchmark.RepairLegacyTPURow(s.run.SourceRunID, row)
		staged, ok := s.normalize(a.Name, file, e.Index, row)
		s.reader.Recycle(row) // the point holds nothing of the row's map
		if !ok {
			return nil
		}
		if s.owns != nil {
			s.owns.contents[content] = struct{}{}
		}
		staged.IsAggregate, staged.AttemptRank = pa.Aggregate, pa.Rank
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
		s.tally.Fail(schema.CategoryBenchmark, a.Name, file, ferr.Error())
	}
	// Hash the whole file even when reading stopped early.
	if _, err := io.Copy(io.Discard, dr); err != nil {
		s.deps.Log.Debug("finish file digest", zap.String("artifact", a.Name), zap.String("file", file), zap.Error(err))
	}
	sum.Details.BytesRead += dr.N
	rec.AddFile(file, dr.Digest(), dr.N)
	return nil
}

// quarantined reads a per-job file a rejected_rows_* list names and, when
// its content is the listed row, counts its rows as read and skipped
// (details.quarantinedRows) and reports true: the producer left them out of
// its aggregate, and so does the ingest. A file that differs (a later
// attempt re-uploaded it) or cannot be read here is read as usual.
func (s *parseWorker) quarantined(fsys fs.FS, artifact, file string, rec *runstate.Record) bool {
	f, err := fsys.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	dr := runstate.NewDigestReader(f)
	data, err := io.ReadAll(io.LimitReader(dr, quarantine.MaxFileBytes+1))
	if err != nil || len(data) > quarantine.MaxFileBytes || !s.quarantine.BenchmarkFile(artifact+"/"+file, data) {
		return false
	}
	rows := int64(1)
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) == nil {
		rows = int64(len(elems))
	}
	sum := s.tally.Summary()
	sum.Stats.RawBenchmarkRows += rows
	sum.Rows.Benchmark.Skipped += rows
	sum.Details.QuarantinedRows += rows
	sum.Details.BytesRead += dr.N
	rec.AddFile(file, dr.Digest(), dr.N)
	s.deps.Log.Info("skipped a per-job file the producer quarantined", zap.String("artifact", artifact), zap.String("file", file))
	return true
}

// normalize maps one row and counts its outcome; it returns the row to
// stage when it is good.
func (s *parseWorker) normalize(artifact, file string, index int, row map[string]any) (schema.StagedBenchmark, bool) {
	sum := s.tally.Summary()
	counts := &sum.Rows.Benchmark
	point, out := s.deps.Normalizer.Normalize(row)
	switch out.Kind {
	case benchmark.Failed:
		counts.Failed++
		if out.UnsupportedSchema {
			sum.Details.UnsupportedSchemaRows++
		}
		s.tally.Fail(schema.CategoryBenchmark, artifact, file, fmt.Sprintf("row %d: %s", index, out.Reason))
		return schema.StagedBenchmark{}, false
	case benchmark.Unmapped:
		counts.Unmapped++
		s.tally.AddUnmappedValues(out.Unmapped)
		if s.owns != nil && strings.HasPrefix(artifact, "bmk_agentic_") {
			s.agentx.Unmapped++ // its trace cannot be linked
		}
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
	// backfill: the ledger's correction of the point, applied (or withheld:
	// the point's metrics differ from the audited measurement); counted
	// below once the point is known to be staged.
	backfill, withheld := "", ""
	if s.ids != nil {
		source := point.Key()
		if b, ok := s.deps.Overrides.PointBackfill(s.run.SourceRunID, s.run.SourceRunAttempt, &point); ok {
			if b.ApplyTo(&point) {
				backfill = b.ID
			} else {
				withheld = b.ID
			}
		}
		s.ids.record(source, point.Key(), backfill)
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
	switch {
	case backfill != "":
		sum.Details.BackfilledPoints++
	case withheld != "":
		sum.Details.PointBackfillsWithheld++
		s.deps.Log.Info("point backfill withheld: the point's metrics differ from the audited measurement", zap.String("backfill", withheld),
			zap.String("artifact", artifact), zap.String("file", file), zap.Int("row", index))
	}
	if s.owns != nil {
		s.owns.points[h] = struct{}{}
	}
	if r, ok := s.deps.Overrides.GPUPowerRetired(s.run.SourceRunID, s.run.SourceRunAttempt, s.headSHA, &point); ok {
		if _, err := overrides.StripGPUPower(&point, s.deps.Catalog.GPUPowerKeys()); err != nil {
			counts.Failed++
			s.tally.Fail(schema.CategoryBenchmark, artifact, file, fmt.Sprintf("row %d: retiring its GPU power: %v", index, err))
			return schema.StagedBenchmark{}, false
		}
		sum.Details.RetiredGPUPowerPoints++
		s.deps.Log.Info("retired the GPU power of a benchmark point", zap.String("artifact", artifact), zap.String("file", file),
			zap.Int("row", index), zap.String("reason", r.Reason))
	}
	for _, k := range out.UnknownMetrics {
		s.tally.AddUnknownMetric(k)
	}
	r := schema.StagedBenchmark{Point: point, Key: key, Source: schema.Provenance{Artifact: artifact, File: file, Row: index}}
	withServerMetrics(&r)
	return r, true
}

// eofReader remembers that its file ended, so that finishing the digest of
// a file the row reader read to its end costs no further read call.
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	if e.eof {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	e.eof = err == io.EOF
	return n, err
}
