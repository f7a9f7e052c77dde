package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// LoadDataset writes a corpus in one transaction: the dataset's row, every
// conversation next yields (one COPY, replacing those stored), then its
// count, summary and chart data. next returns false after the last one;
// an error from it rolls everything back. It returns how many
// conversations it wrote and how many the dataset held before.
func (s *Store) LoadDataset(ctx context.Context, d schema.DatasetLoad,
	next func() (schema.DatasetConversation, bool, error)) (written, replaced int64, err error) {
	r := d.Row
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, 0, s.opts.explain("begin the dataset load", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	if _, err := tx.Exec(ctx, qUpsertDataset, r.ID, r.Slug, r.Label, r.Variant, r.Description, r.HFURL, r.License); err != nil {
		return 0, 0, s.opts.explain("write dataset "+r.ID, err)
	}
	tag, err := tx.Exec(ctx, qClearConversations, r.ID)
	if err != nil {
		return 0, 0, s.opts.explain("clear the conversations of "+r.ID, err)
	}
	replaced = tag.RowsAffected()
	written, err = tx.CopyFrom(ctx, pgx.Identifier{"dataset_conversations"}, conversationColumns,
		pgx.CopyFromFunc(func() ([]any, error) {
			c, ok, err := next()
			if err != nil || !ok {
				return nil, err
			}
			return []any{r.ID, c.ConvID, c.Models, c.NumTurns, c.NumSubagentGroups, c.TotalIn, c.TotalOut, c.TotalCached,
				string(c.Structure)}, nil
		}))
	if err != nil {
		return 0, 0, s.opts.explain("write the conversations of "+r.ID, err)
	}
	count, summary, chart, err := d.Finish()
	if err != nil {
		return 0, 0, err
	}
	if int64(count) != written {
		return 0, 0, fmt.Errorf("dataset %s: %d conversations read, %d written", r.ID, count, written)
	}
	if _, err := tx.Exec(ctx, qFinishDataset, r.ID, count, string(summary), string(chart)); err != nil {
		return 0, 0, s.opts.explain("record the summary of "+r.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, s.opts.explain("commit the dataset load", err)
	}
	return written, replaced, nil
}
