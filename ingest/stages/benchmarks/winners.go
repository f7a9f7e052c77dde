package benchmarks

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// Winners decides which staged copy of every point the run writes —
// per-job files before aggregates, newest attempt first, then artifact,
// file and row, compared as bytes (schema.CompareCopies); never the order
// rows arrived in. The store reports each copy as it stages it (Add, with
// the digests it computed); the stage hands the store the winners to write
// (Ranking.Write) and the traces stage their points. It holds one small
// entry per point.
type Winners struct {
	best map[[16]byte]winner
}

type winner struct {
	schema.StagedCopy
	copies, aggregates int32 // every staged copy of the point, the aggregate ones
}

// NewWinners returns an empty ranking.
func NewWinners() *Winners { return &Winners{best: map[[16]byte]winner{}} }

// Add offers one staged copy.
func (w *Winners) Add(c schema.StagedCopy) {
	cur, ok := w.best[c.Point]
	n := winner{StagedCopy: c, copies: cur.copies + 1, aggregates: cur.aggregates}
	if c.Rank.Aggregate {
		n.aggregates++
	}
	if ok && schema.CompareCopies(cur.Rank, c.Rank) <= 0 {
		cur.copies, cur.aggregates = n.copies, n.aggregates
		w.best[c.Point] = cur
		return
	}
	w.best[c.Point] = n
}

// Ranking is what the ranking decided: the staging order (seq) of the
// winners to write (changed or new), in point-key order, and how every
// staged copy counts.
type Ranking struct {
	Write []int32
	// Adopted is the staging order of the winners an adopted row stands
	// for: the row learns their provenance.
	Adopted []int32
	// Staged copies; Winners, one per point; Covered: losing aggregate
	// copies of a point a per-job file won; Stale: any other loser (an
	// older attempt, or a repeat within the attempt).
	Staged, Winners, Covered, Stale int64
}

// Result counts the staged copies and lists the winners to write.
func (w *Winners) Result() Ranking {
	var r Ranking
	if w == nil {
		return r
	}
	keys := make([][16]byte, 0, len(w.best))
	for k := range w.best {
		keys = append(keys, k)
	}
	// Rows are written in point-key order, so row ids do not depend on the
	// order the parser's workers staged them in.
	slices.SortFunc(keys, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	for _, k := range keys {
		c := w.best[k]
		r.Staged += int64(c.copies)
		r.Winners++
		covered := int64(0)
		if !c.Rank.Aggregate {
			covered = int64(c.aggregates)
		}
		r.Covered += covered
		r.Stale += int64(c.copies) - 1 - covered
		if !c.Unchanged {
			r.Write = append(r.Write, c.Seq)
		}
		if c.Adopted {
			r.Adopted = append(r.Adopted, c.Seq)
		}
	}
	return r
}

// Points lists the winners in source order (artifact, file, row), for the
// traces stage.
func (w *Winners) Points() []schema.TracePoint {
	if w == nil {
		return nil
	}
	out := make([]*winner, 0, len(w.best))
	for k := range w.best {
		c := w.best[k]
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *winner) int {
		return cmp.Or(cmp.Compare(a.Rank.Artifact, b.Rank.Artifact), cmp.Compare(a.Rank.File, b.Rank.File), cmp.Compare(a.Rank.Row, b.Rank.Row))
	})
	ps := make([]schema.TracePoint, len(out))
	for i, c := range out {
		d := c.Digest
		ps[i] = schema.TracePoint{Digest: d[:], BenchmarkType: c.BenchmarkType, Artifact: c.Rank.Artifact, File: c.Rank.File,
			IsAggregate: c.Rank.Aggregate, Written: c.Written}
	}
	return ps
}

// Counts is what the run's benchmark rows count for in the summary, once
// the store has written the winners (res): each winner new or duplicate,
// each loser skipped as covered or stale, and the run stats, configs and
// availability the store wrote.
func (r Ranking) Counts(res schema.ApplyResult) schema.Counters {
	var c schema.Counters
	b := &c.Rows.Benchmark
	b.New = res.BenchmarkNew
	b.Duplicate = r.Winners - res.BenchmarkNew
	b.Skipped = r.Covered + r.Stale
	c.Stats.CoveredByPerJobFiles = r.Covered // staged aggregate copies a per-job copy won
	c.Stats.RunStatsNew, c.Stats.RunStatsDuplicate = res.RunStatsNew, res.RunStatsDuplicate
	c.Details.StaleAttemptRows = r.Stale
	c.Details.BenchmarkRowsUpdated = res.BenchmarkUpdated
	c.Details.ConfigsNew, c.Details.AvailabilityNew = res.ConfigsNew, res.AvailabilityNew
	c.Details.RunStatsRows = res.RunStatsNew + res.RunStatsDuplicate
	return c
}
