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
}

func newWinners() *winners { return &winners{best: map[digest]winner{}} }

// add offers one staged copy of the point keyed by key.
func (w *winners) add(key digest, c winner) {
	if cur, ok := w.best[key]; ok && compareCopies(cur, c) <= 0 {
		return
	}
	w.best[key] = c
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
