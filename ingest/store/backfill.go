package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inferencex/ingest/schema"
)

// OpenBackfill joins the active pass of spec.Key, or begins one.
func (s *Store) OpenBackfill(ctx context.Context, spec schema.BackfillSpec) (schema.BackfillPass, error) {
	p := schema.BackfillPass{Key: spec.Key, Repo: spec.Repo, Reingest: spec.Reingest}
	params := spec.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	// Two workers may race to begin the pass: the loser's insert does
	// nothing and its next statement sees the winner's pass.
	for range 3 {
		err := s.pool.QueryRow(ctx, qOpenBackfill, spec.Key, spec.Repo, []byte(params), spec.Reingest).
			Scan(&p.ID, &p.StartedAt, &p.LedgerMark)
		if err == nil {
			p.Created = true
			return p, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return p, fmt.Errorf("begin backfill pass: %w", err)
		}
		err = s.pool.QueryRow(ctx, qActiveBackfill, spec.Key).Scan(&p.ID, &p.Repo, &p.Reingest, &p.StartedAt, &p.LedgerMark)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return p, fmt.Errorf("join backfill pass: %w", err)
		}
		// The active pass finished in between: begin the next one.
	}
	return p, errors.New("begin backfill pass: the active pass kept changing")
}

// ActiveBackfill returns the open pass of a key, if there is one. It
// writes nothing: the dry run reads it.
func (s *Store) ActiveBackfill(ctx context.Context, key string) (schema.BackfillPass, bool, error) {
	p := schema.BackfillPass{Key: key}
	err := s.pool.QueryRow(ctx, qActiveBackfill, key).Scan(&p.ID, &p.Repo, &p.Reingest, &p.StartedAt, &p.LedgerMark)
	if errors.Is(err, pgx.ErrNoRows) || missingTable(err) {
		// No pass, or a schema from before backfills (a dry run does not
		// migrate): nothing is open.
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read the open backfill pass: %w", err)
	}
	return p, true, nil
}

// EnqueueBackfill adds runs to a pass in one statement; runs it already
// holds keep their state. It returns how many were added, by state.
func (s *Store) EnqueueBackfill(ctx context.Context, passID int64, runs []schema.BackfillRun) (map[schema.BackfillState]int64, error) {
	added := map[schema.BackfillState]int64{}
	if len(runs) == 0 {
		return added, nil
	}
	ids := make([]int64, len(runs))
	attempts := make([]int32, len(runs))
	created := make([]*time.Time, len(runs))
	trees, states, details := make([]string, len(runs)), make([]string, len(runs)), make([]string, len(runs))
	for i, r := range runs {
		ids[i], attempts[i], trees[i], details[i] = r.RunID, int32(r.Attempt), r.Tree, r.Detail
		if !r.CreatedAt.IsZero() {
			t := r.CreatedAt.UTC()
			created[i] = &t
		}
		states[i] = string(r.State)
		if r.State == "" {
			states[i] = string(schema.BackfillPending)
		}
	}
	rows, err := s.pool.Query(ctx, qEnqueueBackfill, passID, ids, attempts, created, trees, states, details)
	if err != nil {
		return nil, fmt.Errorf("queue %d runs in backfill pass %d: %w", len(runs), passID, err)
	}
	queued, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("queue %d runs in backfill pass %d: %w", len(runs), passID, err)
	}
	for _, state := range queued {
		added[schema.BackfillState(state)]++
	}
	return added, nil
}

// BackfillClaim is a run a worker holds: no other worker can claim it
// until Settle or Release, or until the worker's connection goes away.
type BackfillClaim struct {
	tx     pgx.Tx
	passID int64
	Run    schema.BackfillRun
}

// ClaimBackfillRun claims the oldest pending run of the pass that no other
// worker holds; nil when there is none.
func (s *Store) ClaimBackfillRun(ctx context.Context, passID int64) (*BackfillClaim, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim a backfill run: %w", err)
	}
	c := &BackfillClaim{tx: tx, passID: passID}
	var created *time.Time
	b := &pgx.Batch{}
	b.Queue(qClaimKeepalive)
	b.Queue(qClaimBackfillRun, passID)
	res := tx.SendBatch(ctx, b)
	_, err = res.Exec()
	if err == nil {
		err = res.QueryRow().Scan(&c.Run.RunID, &c.Run.Attempt, &created, &c.Run.Tree)
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		return nil, fmt.Errorf("claim a backfill run: %w", err)
	}
	if created != nil {
		c.Run.CreatedAt = created.UTC()
	}
	return c, nil
}

// Settle records how the run ended and releases the claim.
func (c *BackfillClaim) Settle(ctx context.Context, o schema.BackfillOutcome) error {
	_, err := c.tx.Exec(ctx, qSettleBackfillRun, c.passID, c.Run.RunID, string(o.State), int32(o.Attempt), o.IngestID,
		string(o.IngestStatus), o.Worker, o.Detail, o.Duration.Milliseconds())
	if err == nil {
		err = c.tx.Commit(ctx)
	}
	if err != nil {
		_ = c.tx.Rollback(context.WithoutCancel(ctx))
		return fmt.Errorf("backfill run %d: record the outcome: %w", c.Run.RunID, err)
	}
	return nil
}

// Alive checks that the claim still holds: its transaction answers. It
// fails once the claim's connection or session is gone, when another
// worker may have claimed the run.
func (c *BackfillClaim) Alive(ctx context.Context) error {
	if _, err := c.tx.Exec(ctx, qClaimAlive); err != nil {
		return fmt.Errorf("the claim on run %d is lost: %w", c.Run.RunID, err)
	}
	return nil
}

// Release gives the run back to the queue untouched.
func (c *BackfillClaim) Release(ctx context.Context) {
	_ = c.tx.Rollback(context.WithoutCancel(ctx))
}

// BackfillCounts counts the runs of a pass by state.
func (s *Store) BackfillCounts(ctx context.Context, passID int64) (schema.BackfillCounts, error) {
	var c schema.BackfillCounts
	err := s.pool.QueryRow(ctx, qBackfillCounts, passID).Scan(&c.Total, &c.Pending, &c.Ingested, &c.Skipped, &c.Failed, &c.Worked)
	if err != nil {
		return c, fmt.Errorf("count backfill pass %d: %w", passID, err)
	}
	return c, nil
}

// FinishBackfill closes the pass when nothing of it is pending, and
// reports whether it is closed.
func (s *Store) FinishBackfill(ctx context.Context, passID int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, qFinishBackfill, passID)
	if err != nil {
		return false, fmt.Errorf("finish backfill pass %d: %w", passID, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	// Another worker may have closed it: read it in a statement of its own,
	// which sees that worker's commit.
	var closed bool
	if err := s.pool.QueryRow(ctx, qBackfillFinished, passID).Scan(&closed); err != nil {
		return false, fmt.Errorf("finish backfill pass %d: %w", passID, err)
	}
	return closed, nil
}

// BackfillSettled lists the pass's runs in the given states, in the order
// they were settled.
func (s *Store) BackfillSettled(ctx context.Context, passID int64, states ...schema.BackfillState) ([]schema.BackfillSettled, error) {
	names := make([]string, len(states))
	for i, st := range states {
		names[i] = string(st)
	}
	return s.settled(ctx, passID, qBackfillSettled, names)
}

// BackfillNoteworthy lists, in the order they were settled, the pass's
// failed runs and the runs a worker skipped for another reason than the
// routine one, whose detail starts with routinePrefix. A pass of
// thousands of runs already ingested reads only those.
func (s *Store) BackfillNoteworthy(ctx context.Context, passID int64, routinePrefix string) ([]schema.BackfillSettled, error) {
	return s.settled(ctx, passID, qBackfillNoteworthy, routinePrefix)
}

// BackfillRuns lists every run of the pass, pending ones too, oldest
// first, with the creation time it was queued with: the per-month
// summary of a backfill.
func (s *Store) BackfillRuns(ctx context.Context, passID int64) ([]schema.BackfillSettled, error) {
	return s.settled(ctx, passID, qBackfillRuns)
}

func (s *Store) settled(ctx context.Context, passID int64, query string, args ...any) ([]schema.BackfillSettled, error) {
	rows, err := s.pool.Query(ctx, query, append([]any{passID}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("list backfill pass %d: %w", passID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (r schema.BackfillSettled, err error) {
		var state, status string
		var ms int64
		var finished, created *time.Time
		dest := []any{&r.RunID, &r.Attempt, &state, &r.IngestID, &status, &r.Worker, &r.Detail, &ms, &finished}
		if query == qBackfillRuns {
			dest = append(dest, &created)
		}
		if err := row.Scan(dest...); err != nil {
			return r, err
		}
		if created != nil {
			r.CreatedAt = created.UTC()
		}
		r.State, r.IngestStatus, r.Duration = schema.BackfillState(state), schema.Status(status), time.Duration(ms)*time.Millisecond
		if finished != nil {
			r.FinishedAt = finished.UTC()
		}
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list backfill pass %d: %w", passID, err)
	}
	return out, nil
}

// LedgerHits returns, for each of the runs that has one, the newest
// ingest that wrote it (succeeded or completed with failures) with a
// ledger id above after, per attempt: hits[run][attempt].
func (s *Store) LedgerHits(ctx context.Context, repo string, runIDs []int64, after int64) (map[int64]map[int]schema.LedgerHit, error) {
	rows, err := s.pool.Query(ctx, qLedgerHits, repo, runIDs, after)
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	hits := map[int64]map[int]schema.LedgerHit{}
	var h schema.LedgerHit
	var status string
	if _, err := pgx.ForEachRow(rows, []any{&h.RunID, &h.Attempt, &h.IngestID, &status}, func() error {
		h.Status = schema.Status(status)
		if hits[h.RunID] == nil {
			hits[h.RunID] = map[int]schema.LedgerHit{}
		}
		hits[h.RunID][h.Attempt] = h
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	return hits, nil
}

// RecentIngests lists up to limit ledger rows, newest first; only those of
// one run when runID is set.
func (s *Store) RecentIngests(ctx context.Context, limit int, runID int64) ([]schema.IngestRecord, error) {
	query := qRecentIngests
	if ok, err := s.hasBackfills(ctx); err != nil {
		return nil, err
	} else if !ok {
		query = qRecentIngestsNoBackfills
	}
	rows, err := s.pool.Query(ctx, query, limit, runID)
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", schemaHint(err))
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (r schema.IngestRecord, err error) {
		var status string
		var finished *time.Time
		var ms int64
		var summary []byte
		if err := row.Scan(&r.ID, &r.Repo, &r.RunID, &r.Attempt, &r.MergeRunID, &r.MergeRunAttempt, &status, &r.Target,
			&r.StartedAt, &finished, &ms, &r.Error, &r.ToolVersion, &summary, &r.BackfillID); err != nil {
			return r, fmt.Errorf("read the ledger: %w", err)
		}
		r.Status, r.Duration, r.StartedAt = schema.Status(status), time.Duration(ms)*time.Millisecond, r.StartedAt.UTC()
		if finished != nil {
			r.FinishedAt = finished.UTC()
		}
		if len(summary) > 0 {
			var sum schema.Summary
			if err := json.Unmarshal(summary, &sum); err != nil {
				return r, fmt.Errorf("ingest %d: decode the stored summary: %w", r.ID, err)
			}
			r.Summary = &sum
		}
		return r, nil
	})
}

// RecentBackfills lists up to limit passes with their counts: unfinished
// ones first, then the newest.
func (s *Store) RecentBackfills(ctx context.Context, limit int) ([]schema.BackfillInfo, error) {
	if ok, err := s.hasBackfills(ctx); err != nil || !ok {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, qRecentBackfills, limit)
	if err != nil {
		return nil, fmt.Errorf("read backfill passes: %w", schemaHint(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (b schema.BackfillInfo, err error) {
		var finished *time.Time
		c := &b.Counts
		if err := row.Scan(&b.Pass.ID, &b.Pass.Key, &b.Pass.Repo, &b.Pass.Reingest, &b.Pass.LedgerMark, &b.Pass.StartedAt, &finished,
			&c.Total, &c.Pending, &c.Ingested, &c.Skipped, &c.Failed, &c.Worked); err != nil {
			return b, err
		}
		b.Pass.StartedAt = b.Pass.StartedAt.UTC()
		if finished != nil {
			b.Pass.FinishedAt = finished.UTC()
		}
		return b, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read backfill passes: %w", err)
	}
	return out, nil
}

// hasBackfills reports whether the schema has the backfill tables: a
// read-only command on a database not yet migrated to 000005 still reads
// the ledger.
func (s *Store) hasBackfills(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, qHasBackfills).Scan(&ok); err != nil {
		return false, fmt.Errorf("read the schema: %w", err)
	}
	return ok, nil
}

func missingTable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42P01"
}

// schemaHint says what to do when a table is missing: the database's
// schema is older than the binary (read-only commands never migrate).
func schemaHint(err error) error {
	if missingTable(err) {
		return fmt.Errorf("%w (the database schema is older than this binary: run `ingest migrate up`)", err)
	}
	return err
}
