package store

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// winners ranks the staged copies of every point while they are staged —
// per-job files before aggregates, newest attempt first, then artifact,
// file and row, compared as bytes; never the order rows arrived in — so
// qUpsertBenchmarks writes the winners without sorting the staging table,
// and later stages get them without ranking it again. It holds one small
// entry per point.
type winners struct {
	best map[digest]winner
}

type winner struct {
	// digest is the content digest of the copy.
	digest        digest
	benchmarkType string
	// rank orders the copies of a point (schema.CompareCopies).
	rank               schema.CopyRank
	seq                int32 // staging order (stage_benchmark.seq)
	copies, aggregates int32 // every staged copy of the point, the aggregate ones
	unchanged          bool  // its digest is stored already
	// written is what the copy is written with for the traces stage
	// (schema.TracePoint.Written); nil when unchanged.
	written *schema.TraceRowLink
}

func newWinners() *winners { return &winners{best: map[digest]winner{}} }

// add offers one staged copy of the point keyed by key.
func (w *winners) add(key digest, c winner) {
	cur, ok := w.best[key]
	c.copies, c.aggregates = cur.copies+1, cur.aggregates
	if c.rank.Aggregate {
		c.aggregates++
	}
	if ok && schema.CompareCopies(cur.rank, c.rank) <= 0 {
		cur.copies, cur.aggregates = c.copies, c.aggregates
		w.best[key] = cur
		return
	}
	w.best[key] = c
}

// ranking is what the ranking decided: the staging order (seq) of the
// winners to write (changed or new), in point-key order, and how every
// staged copy counts.
type ranking struct {
	write                           []int32
	staged, winners, covered, stale int64
}

// result counts the staged copies: per point one winner; a losing
// aggregate copy of a point a per-job file won is covered, any other loser
// a stale attempt (or a repeat within the attempt).
func (w *winners) result() ranking {
	var r ranking
	if w == nil {
		return r
	}
	keys := make([]digest, 0, len(w.best))
	for k := range w.best {
		keys = append(keys, k)
	}
	// Rows are written in point-key order, so row ids do not depend on the
	// order the parser's workers staged them in.
	slices.SortFunc(keys, func(a, b digest) int { return bytes.Compare(a[:], b[:]) })
	for _, k := range keys {
		c := w.best[k]
		r.staged += int64(c.copies)
		r.winners++
		covered := int64(0)
		if !c.rank.Aggregate {
			covered = int64(c.aggregates)
		}
		r.covered += covered
		r.stale += int64(c.copies) - 1 - covered
		if !c.unchanged {
			r.write = append(r.write, c.seq)
		}
	}
	return r
}

// sources gives, by content digest, the artifact and file of each winner
// this ingest staged (none before the benchmark stage). Two winners with
// one digest (points an adopted row stands for together) give the first
// in source order.
func (w *winners) sources() map[digest]schema.Provenance {
	out := map[digest]schema.Provenance{}
	for _, p := range w.points() {
		var k digest
		copy(k[:], p.Digest)
		if _, ok := out[k]; !ok {
			out[k] = schema.Provenance{Artifact: p.Artifact, File: p.File}
		}
	}
	return out
}

// points lists the winners in source order (artifact, file, row).
func (w *winners) points() []schema.TracePoint {
	if w == nil {
		return nil
	}
	out := make([]*winner, 0, len(w.best))
	for k := range w.best {
		c := w.best[k]
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *winner) int {
		return cmp.Or(cmp.Compare(a.rank.Artifact, b.rank.Artifact), cmp.Compare(a.rank.File, b.rank.File), cmp.Compare(a.rank.Row, b.rank.Row))
	})
	ps := make([]schema.TracePoint, len(out))
	for i, c := range out {
		ps[i] = schema.TracePoint{Digest: c.digest[:], BenchmarkType: c.benchmarkType, Artifact: c.rank.Artifact, File: c.rank.File, IsAggregate: c.rank.Aggregate,
			Written: c.written}
	}
	return ps
}
