package runstate

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/changelog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Deps are the collaborators of a run that the stages use (the pipeline's
// Deps without the store, which each stage sees as its own Writer).
type Deps struct {
	Catalog    *catalog.Catalog
	Normalizer *benchmark.Normalizer
	Overrides  *overrides.Overrides
	Log        *zap.Logger
	// Now is the clock.
	Now func() time.Time
	// Arrow allocates the telemetry stage's Arrow buffers; nil means a
	// pool of its own.
	Arrow memory.Allocator
	// LargeHeap, when set, is called by a stage about to hold a large
	// working set of its own; it returns what to call when done.
	LargeHeap func() (done func())
	// Progress, when set, is told how far each stage has got.
	Progress Progress
}

// Env is what the stages after the benchmark rows see: the run as it was
// written, its plan and the tally they report to. They all write inside the
// run's one transaction, so a failure in any of them rolls everything back.
type Env struct {
	Deps  Deps
	Start schema.RunStart
	Tree  *source.Tree
	Plan  Plan
	Tally *Tally
	Sum   *schema.Summary
	// Log is the pipeline's logger.
	Log *zap.Logger
	// Records are the ledger's artifact records; stages append theirs.
	Records *[]*Record
	// AgentX is what the benchmark stage noted of the AgentX rows.
	AgentX AgentX
	// Points are the winning copy of every benchmark point the run
	// staged, in source order (the benchmark stage's ranking).
	Points []schema.TracePoint
	// Changelog is the run's changelog, read before the benchmark stage.
	Changelog *Changelog
	// Quarantine lists the rows the producer quarantined (never nil).
	Quarantine *quarantine.Lists
}

// Changelog is the run's changelog, read before the benchmark stage (an
// evals-only changelog skips it) and written by the changelog stage, with
// the artifact and file it was read from (empty for the fallback entry).
type Changelog struct {
	Log            changelog.Changelog
	Artifact, File string
}
