// Package benchmarks is the benchmark stage: it streams the plan's
// benchmark files through the normalizer into rows to stage, counting
// every row's outcome, and reads the run stats.
package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// Stage reads every benchmark file of the plan through a few
// parseWorkers and hands the good rows to the store. It owns the benchmark
// counters of the summary, merged from its workers.
type Stage struct {
	deps runstate.Deps
	run  schema.RunIdentity
	// headSHA is the source run's head commit ("" when unknown), part of
	// the exact identity the GPU power retirement policy matches.
	headSHA string
	tally   *runstate.Tally
	// records are the run's ledger records, which the stage appends to.
	records *[]*runstate.Record
	// agentx: dataset slugs and unmapped AgentX rows, for the traces stage.
	agentx runstate.AgentX
	staged int64
	// seed keys the hashes of this run.
	seed maphash.Seed
	// quarantine lists the per-job files the producer quarantined.
	quarantine *quarantine.Lists
	// evidence: execution records a receipt names, by artifact.
	evidence map[string]map[string]bool
	// notRead: files of benchmark artifacts that hold no rows.
	notRead []string
	// ids: the staged identities, kept only when the ledger corrects
	// points of the run.
	ids *identities
	// winners ranks the copies the store stages.
	winners *Winners
}

// SetQuarantine gives the stage the producer's lists of quarantined rows,
// read before any benchmark file.
func (s *Stage) SetQuarantine(l *quarantine.Lists) { s.quarantine = l }

// SetEvidence gives the stage the execution records a measurement receipt
// names, by artifact: evidence, never rows (execution.json always is).
func (s *Stage) SetEvidence(paths map[string]map[string]bool) { s.evidence = paths }

// NotRead lists (artifact/file) the files of benchmark artifacts that are
// not JSON and so hold no rows, in order.
func (s *Stage) NotRead() []string { return s.notRead }

// New returns the benchmark stage of a run: it reports into t and appends
// the records of the artifacts it reads to records.
func New(d runstate.Deps, run schema.RunIdentity, headSHA string, t *runstate.Tally, records *[]*runstate.Record) *Stage {
	s := &Stage{deps: d, run: run, headSHA: headSHA, tally: t, records: records, seed: maphash.MakeSeed(), winners: NewWinners()}
	if d.Overrides != nil && d.Overrides.HasPointBackfills(run.SourceRunID) {
		s.ids = newIdentities()
	}
	return s
}

// Staged is how many rows the stage sent to be staged.
func (s *Stage) Staged() int64 { return s.staged }

// Winners ranks the copies of every point the store stages: its Add is
// the store's seen.
func (s *Stage) Winners() *Winners { return s.winners }

// AgentX is what the stage noted of the AgentX rows, for the traces stage.
func (s *Stage) AgentX() runstate.AgentX { return s.agentx }

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

// Stream sends every stageable row to out and closes it. Per-job artifacts
// are read first, then aggregates: an aggregate row whose point a per-job
// row already owns is counted as covered right here and never sent to the
// database. Each phase runs a few workers with their own counters, merged
// in a deterministic order. It returns only fatal errors (cancellation);
// bad input is counted and reported.
func (s *Stage) Stream(ctx context.Context, p runstate.Plan, out chan<- schema.StagedBenchmark) error {
	defer close(out)
	var perJob, aggregates []runstate.Planned
	for _, pa := range p.Benchmark {
		if pa.Aggregate {
			aggregates = append(aggregates, pa)
		} else {
			perJob = append(perJob, pa)
		}
	}
	owned := newCoverage()
	s.deps.Expect("files", 0) // known only once each artifact is open
	started := time.Now()
	if err := s.phase(ctx, perJob, out, owned, nil); err != nil {
		return err
	}
	s.deps.Log.Debug("per-job benchmark files read", zap.Int("artifacts", len(perJob)), zap.Duration("took", time.Since(started)))
	started = time.Now()
	err := s.phase(ctx, aggregates, out, nil, owned)
	s.deps.Log.Debug("aggregate benchmark files read", zap.Int("artifacts", len(aggregates)), zap.Duration("took", time.Since(started)))
	s.sortOutputs()
	if err == nil && s.ids != nil {
		err = s.ids.err()
	}
	if n := s.tally.Summary().Details.BackfilledPoints; n > 0 {
		s.tally.WriteNote(fmt.Sprintf("%s corrected by the run overrides' point backfills (metrics, offload mode)",
			runstate.Plural(int(n), "benchmark point", "benchmark points")))
	}
	if n := s.tally.Summary().Details.PointBackfillsWithheld; n > 0 {
		s.tally.WriteNote(fmt.Sprintf("point backfills withheld from %s: their metrics differ from the audited measurement the backfill rests on (stored as read)",
			runstate.Plural(int(n), "benchmark point", "benchmark points")))
	}
	if n := s.tally.Summary().Details.RetiredGPUPowerPoints; n > 0 {
		s.tally.Note(fmt.Sprintf("%s GPU power retired by the legacy amd-smi source policy (its metrics and workers keep no GPU watts or joules)",
			runstate.Plural(int(n), "point has its", "points have their")))
	}
	return err
}

// phase reads artifacts with a pool of workers. Rows staged are added to
// own (when set); rows whose point is in covered (when set) are counted as
// covered instead of staged.
func (s *Stage) phase(ctx context.Context, arts []runstate.Planned, out chan<- schema.StagedBenchmark, own, covered *coverage) error {
	workers := min(2*runtime.GOMAXPROCS(0), maxParseWorkers, max(len(arts), 1))
	parts := make([]*parseWorker, workers)
	errs := make([]error, workers)
	jobs := make(chan runstate.Planned)
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = s.fork(covered, own != nil)
		wg.Add(1)
		go func(w *parseWorker, errp *error) {
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
func (s *Stage) fork(covered *coverage, recordOwned bool) *parseWorker {
	w := &parseWorker{deps: s.deps, run: s.run, headSHA: s.headSHA, tally: runstate.NewTally(&schema.Summary{}), reader: benchmark.NewReader(),
		covered: covered, seed: s.seed, quarantine: s.quarantine, evidence: s.evidence, ids: s.ids}
	if recordOwned {
		w.owns = newCoverage()
	}
	return w
}

// merge adds a worker's counters, failures, unmapped values and records.
func (s *Stage) merge(w *parseWorker) {
	s.tally.Summary().AddCounters(w.tally.Summary().Counters())
	s.notRead = append(s.notRead, w.notRead...)
	s.tally.Merge(w.tally)
	*s.records = append(*s.records, w.records...)
	s.staged += w.staged
	s.agentx.Add(w.agentx)
}

// sortOutputs puts records and benchmark failures in artifact order, so the
// summary does not depend on which worker read what.
func (s *Stage) sortOutputs() {
	recs := *s.records
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	sort.Strings(s.notRead)
	f := s.tally.Summary().Failures
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
