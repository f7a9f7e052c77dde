package store

import (
	"cmp"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// winners ranks the staged copies of every point while they are staged,
// in the order qUpsertBenchmarks ranks them (per-job files before
// aggregates, newest attempt first, then artifact, file and row, compared
// as bytes like the statement's COLLATE "C"), so later stages get the
// winners without ranking the staging table again.
type winners struct {
	best map[digest]winner
}

type winner struct {
	point schema.TracePoint
	rank  int
	row   int
	// seq is the copy's staging order (stage_benchmark.seq); unchanged
	// says its digest is stored already.
	seq       int32
	unchanged bool
	// copies and aggregates count every staged copy of the point and the
	// aggregate ones among them.
	copies, aggregates int64
}

func newWinners() *winners { return &winners{best: map[digest]winner{}} }

// add offers one staged copy of the point keyed by key.
func (w *winners) add(key digest, c winner) {
	cur, ok := w.best[key]
	c.copies, c.aggregates = cur.copies+1, cur.aggregates
	if c.point.IsAggregate {
		c.aggregates++
	}
	if ok && compareCopies(cur, c) <= 0 {
		cur.copies, cur.aggregates = c.copies, c.aggregates
		w.best[key] = cur
		return
	}
	w.best[key] = c
}

// ranking is what the ranking decided: the staging order of the winners
// to write (changed or new), and how every staged copy counts.
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
	for _, c := range w.best {
		r.staged += c.copies
		r.winners++
		covered := int64(0)
		if !c.point.IsAggregate {
			covered = c.aggregates
		}
		r.covered += covered
		r.stale += c.copies - 1 - covered
		if !c.unchanged {
			r.write = append(r.write, c.seq)
		}
	}
	slices.Sort(r.write)
	return r
}

func compareCopies(a, b winner) int {
	if a.point.IsAggregate != b.point.IsAggregate {
		if a.point.IsAggregate {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.point.Artifact, b.point.Artifact),
		cmp.Compare(a.point.File, b.point.File), cmp.Compare(a.row, b.row))
}

// points lists the winners in source order (artifact, file, row).
func (w *winners) points() []schema.TracePoint {
	if w == nil {
		return nil
	}
	out := make([]winner, 0, len(w.best))
	for _, c := range w.best {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b winner) int {
		return cmp.Or(cmp.Compare(a.point.Artifact, b.point.Artifact), cmp.Compare(a.point.File, b.point.File), cmp.Compare(a.row, b.row))
	})
	ps := make([]schema.TracePoint, len(out))
	for i, c := range out {
		ps[i] = c.point
	}
	return ps
}
