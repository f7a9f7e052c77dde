package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// PublishedEvalScores returns, inside the run's transaction, the newest
// five scores other GitHub runs stored for each model and task (the
// report's eval evidence), in one round trip.
func (t *RunTx) PublishedEvalScores(ctx context.Context, tasks []schema.EvalTask) (map[schema.EvalTask][]schema.PublishedScore, error) {
	return publishedEvalScores(ctx, t.tx, t.start.Run.SourceRunID, tasks)
}

// PublishedEvalScores is RunTx.PublishedEvalScores for GitHub run runID
// outside a run's transaction: a rerun answered from the ledger takes the
// scores as they are now, as a full read would.
func (s *Store) PublishedEvalScores(ctx context.Context, runID int64, tasks []schema.EvalTask) (map[schema.EvalTask][]schema.PublishedScore, error) {
	return publishedEvalScores(ctx, s.pool, runID, tasks)
}

func publishedEvalScores(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, runID int64, tasks []schema.EvalTask) (map[schema.EvalTask][]schema.PublishedScore, error) {
	out := map[schema.EvalTask][]schema.PublishedScore{}
	if len(tasks) == 0 {
		return out, nil
	}
	models, names := make([]string, len(tasks)), make([]string, len(tasks))
	for i, k := range tasks {
		models[i], names[i] = k.Model, k.Task
	}
	rows, err := q.Query(ctx, qPublishedEvalScores, models, names, runID)
	if err != nil {
		return nil, fmt.Errorf("published eval scores: %w", err)
	}
	var (
		k    schema.EvalTask
		p    schema.PublishedScore
		conc *int32
	)
	if _, err := pgx.ForEachRow(rows, []any{&k.Model, &k.Task, &p.RunID, &p.Date, &p.Hardware, &p.Framework, &p.Precision, &conc, &p.Score}, func() error {
		p.Conc = intOf(conc)
		out[k] = append(out[k], p)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("published eval scores: %w", err)
	}
	return out, nil
}
