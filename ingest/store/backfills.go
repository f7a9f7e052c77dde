package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// Override kinds of the audited backfills.
const (
	OverridePointBackfill     = "point_backfill"
	OverrideChangelogBackfill = "changelog_backfill"
)

// applyPointBackfills corrects stored benchmark points. Each backfill must
// find at most one stored row under its source or corrected identity: two
// rows mean the correction would collide with a point already stored
// under the corrected identity, and the whole apply is refused. A row
// already corrected is left alone, so a second apply rewrites nothing.
func applyPointBackfills(ctx context.Context, tx pgx.Tx, plan schema.OverridePlan, res *schema.OverrideResult) error {
	for _, b := range plan.PointBackfills {
		c, p := b.Point.Config, b.Point
		modes := slices.Compact([]string{p.OffloadMode, b.DesiredOffloadMode()})
		rows, err := tx.Query(ctx, qBackfillPointRows, slices.Concat([]any{b.RunID, b.Attempt}, c.KeyFields(),
			[]any{p.BenchmarkType, p.ISL, p.OSL, p.Conc, modes, p.RecipeFingerprint})...)
		if err != nil {
			return fmt.Errorf("point backfill %s: %w", b.ID, err)
		}
		type stored struct {
			id      int64
			offload string
			metrics string
		}
		found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
			var s stored
			return s, r.Scan(&s.id, &s.offload, &s.metrics)
		})
		if err != nil {
			return fmt.Errorf("point backfill %s: %w", b.ID, err)
		}
		switch {
		case len(found) == 0:
			continue // not stored: an ingest of the run applies it
		case len(found) > 1:
			return fmt.Errorf("point backfill %s: run %d attempt %d stores the point under its source (offload %s) and its corrected identity (offload %s): the correction would collide with an existing point",
				b.ID, b.RunID, b.Attempt, p.OffloadMode, b.DesiredOffloadMode())
		}
		row := found[0]
		var decoded any
		if err := json.Unmarshal([]byte(row.metrics), &decoded); err != nil {
			return fmt.Errorf("point backfill %s: stored metrics: %w", b.ID, err)
		}
		metrics, _ := decoded.(map[string]any)
		next, err := b.PlanStoredRow(row.offload, metrics)
		if err != nil {
			return err
		}
		if next == nil {
			continue // already corrected
		}
		doc, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("point backfill %s: %w", b.ID, err)
		}
		tag, err := tx.Exec(ctx, qBackfillPoint, row.id, b.DesiredOffloadMode(), string(doc))
		if err != nil {
			return fmt.Errorf("point backfill %s: %w", b.ID, err)
		}
		res.PointBackfillRowsRewritten += tag.RowsAffected()
		res.Actions = append(res.Actions, schema.OverrideAction{Kind: OverridePointBackfill, RunID: b.RunID, Attempt: b.Attempt,
			Target: b.ID + ": " + pointTarget(&b.Point), Reason: b.Reason, Rows: tag.RowsAffected()})
	}
	return nil
}

// applyChangelogBackfills corrects stored changelogs as the ingest would
// have written them (schema.OverrideChangelogBackfill.ApplyTo), and the
// run's append_only flag with them.
func applyChangelogBackfills(ctx context.Context, tx pgx.Tx, plan schema.OverridePlan, res *schema.OverrideResult) error {
	for _, b := range plan.ChangelogBackfills {
		rows, err := tx.Query(ctx, qBackfillChangelogRows, b.RunID, b.Attempt, b.BaseRef, b.HeadRef)
		if err != nil {
			return fmt.Errorf("changelog backfill %s: %w", b.ID, err)
		}
		var ids []int64
		var runID int64
		var runAppendOnly bool
		var entries []schema.ChangelogRow
		for rows.Next() {
			var id int64
			var r schema.ChangelogRow
			if err := rows.Scan(&id, &runID, &r.ConfigKeys, &r.Description, &r.PRLink, &r.AppendOnly, &runAppendOnly); err != nil {
				rows.Close()
				return fmt.Errorf("changelog backfill %s: %w", b.ID, err)
			}
			ids, entries = append(ids, id), append(entries, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("changelog backfill %s: %w", b.ID, err)
		}
		if len(entries) == 0 {
			continue // not stored: an ingest of the run applies it
		}
		before := slices.Clone(entries)
		b.ApplyTo(entries)
		var n int64
		for i, e := range entries {
			if schema.SameChangelogFields(e, before[i]) {
				continue
			}
			tag, err := tx.Exec(ctx, qBackfillChangelogEntry, ids[i], e.ConfigKeys, e.Description, e.PRLink, e.AppendOnly)
			if err != nil {
				return fmt.Errorf("changelog backfill %s: %w", b.ID, err)
			}
			n += tag.RowsAffected()
		}
		if b.AppendOnly != nil && runAppendOnly != *b.AppendOnly {
			tag, err := tx.Exec(ctx, qSetAppendOnly, runID, *b.AppendOnly)
			if err != nil {
				return fmt.Errorf("changelog backfill %s: %w", b.ID, err)
			}
			n += tag.RowsAffected()
		}
		if n > 0 {
			res.ChangelogRowsRewritten += n
			res.Actions = append(res.Actions, schema.OverrideAction{Kind: OverrideChangelogBackfill, RunID: b.RunID, Attempt: b.Attempt,
				Target: fmt.Sprintf("%s: %s..%s", b.ID, b.BaseRef, b.HeadRef), Reason: b.Reason, Rows: n})
		}
	}
	return nil
}
