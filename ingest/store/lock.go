package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"
)

// lockLogEvery is how often a wait for the run's advisory lock is logged.
const lockLogEvery = 10 * time.Second

// LockHolder is the session holding a run's lock, as pg_stat_activity
// shows it.
type LockHolder struct {
	RunID       int64
	PID         int32
	Application string
	// Role is the holder's login role; Writer says whether that role may
	// write the ingest's tables (a holder no longer listed counts as one).
	Role   string
	Writer bool
}

func (h LockHolder) String() string {
	if h.PID == 0 {
		return "holder no longer listed"
	}
	app := h.Application
	if app == "" {
		app = "(none)"
	}
	return fmt.Sprintf("held by pid %d, application %s", h.PID, app)
}

// LockTimeoutError is an ingest that gave up waiting for its run's
// advisory lock.
type LockTimeoutError struct {
	RunID  int64
	After  time.Duration
	Holder LockHolder
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for the advisory lock of run %d (%s)", FormatDuration(e.After), e.RunID, e.Holder)
}

// LockHeldByNonWriterError is a run's advisory lock held by a session
// whose role cannot write the ingest's tables (the dashboard's reader, for
// one). Advisory locks are open to every role, so such a session could
// hold back every ingest of the run for as long as it stays: a writer
// refuses to wait for it rather than wait until its lock timeout, or
// forever without one.
type LockHeldByNonWriterError struct {
	Holder LockHolder
}

func (e *LockHeldByNonWriterError) Error() string {
	h := e.Holder
	app := h.Application
	if app == "" {
		app = "(none)"
	}
	return fmt.Sprintf("the advisory lock of run %d is held by pid %d, role %s, application %s, and that role cannot write the ingest's tables: "+
		"not waiting for it (end that session, e.g. SELECT pg_terminate_backend(%d), and run again)", h.RunID, h.PID, h.Role, app, h.PID)
}

// firstLockHolder names a session holding the advisory lock of one of the
// runs, a non-writer first (PID 0: none is listed).
func firstLockHolder(ctx context.Context, tx pgx.Tx, runs []int64) (LockHolder, error) {
	var h LockHolder
	err := tx.QueryRow(ctx, qRunLockHolders, runs).Scan(&h.RunID, &h.PID, &h.Application, &h.Role, &h.Writer)
	if errors.Is(err, pgx.ErrNoRows) {
		return LockHolder{}, nil
	}
	return h, err
}

// lockRun takes the run's advisory lock, waiting for it when another
// session holds it: the wait is logged every lockLogEvery, naming the
// holder, and ends with a *LockTimeoutError after the lock timeout, or at
// once with a *LockHeldByNonWriterError when the holder is no writer.
func (t *RunTx) lockRun(ctx context.Context) error {
	runID := t.start.Run.SourceRunID
	b := &pgx.Batch{}
	b.Queue(qWorkMem)
	b.Queue(qTryLockRun, runID)
	res := t.tx.SendBatch(ctx, b)
	if _, err := res.Exec(); err != nil {
		res.Close()
		return t.explain("set work_mem", err)
	}
	var locked bool
	if err := res.QueryRow().Scan(&locked); err != nil {
		res.Close()
		return t.explain(fmt.Sprintf("try the advisory lock of run %d", runID), err)
	}
	if err := res.Close(); err != nil {
		return t.explain(fmt.Sprintf("try the advisory lock of run %d", runID), err)
	}
	if locked {
		return nil
	}
	return t.waitForLock(ctx)
}

func (t *RunTx) waitForLock(ctx context.Context) error {
	runID, limit := t.start.Run.SourceRunID, t.opts.LockTimeout
	began := time.Now()
	for {
		holder, err := t.lockHolder(ctx)
		if err != nil {
			return err
		}
		if holder.PID != 0 && !holder.Writer {
			return &LockHeldByNonWriterError{Holder: holder}
		}
		waited := time.Since(began)
		slice := lockLogEvery
		if limit > 0 {
			if limit-waited < time.Millisecond {
				return &LockTimeoutError{RunID: runID, After: limit, Holder: holder}
			}
			slice = min(slice, limit-waited)
		}
		t.log.Info(fmt.Sprintf("waiting for the advisory lock of run %d (%s)", runID, holder),
			zap.Int32("holder_pid", holder.PID), zap.String("holder_application", holder.Application),
			zap.Duration("waited", waited.Round(time.Millisecond)), zap.Duration("lock_timeout", limit))
		got, err := t.tryLockFor(ctx, slice)
		if err != nil {
			return err
		}
		if got {
			t.log.Info(fmt.Sprintf("got the advisory lock of run %d", runID), zap.Duration("waited", time.Since(began).Round(time.Millisecond)))
			return nil
		}
	}
}

// lockHolder names the session holding the run's lock (PID 0 when none
// is listed any more).
func (t *RunTx) lockHolder(ctx context.Context) (LockHolder, error) {
	h, err := firstLockHolder(ctx, t.tx, []int64{t.start.Run.SourceRunID})
	if err != nil {
		return h, t.explain(fmt.Sprintf("find the holder of the advisory lock of run %d", t.start.Run.SourceRunID), err)
	}
	return h, nil
}

// tryLockFor waits up to d for the run's lock; false means d passed.
func (t *RunTx) tryLockFor(ctx context.Context, d time.Duration) (bool, error) {
	what := fmt.Sprintf("wait for the advisory lock of run %d", t.start.Run.SourceRunID)
	b := &pgx.Batch{}
	b.Queue(qLockWaitSavepoint)
	b.Queue(qSetLockTimeout, millis(d))
	b.Queue(qLockRun, t.start.Run.SourceRunID)
	res := t.tx.SendBatch(ctx, b)
	_, err := res.Exec()
	if err == nil {
		_, err = res.Exec()
	}
	if err == nil {
		_, err = res.Exec()
	}
	cerr := res.Close()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available: the slice is over
		// One statement at a time: the transaction is in error until the
		// rollback, and a batch would prepare the release before it. The
		// release leaves no savepoint behind; the next slice makes its own.
		for _, q := range []string{qLockWaitRollback, qLockWaitRelease} {
			if _, err := t.tx.Exec(ctx, q); err != nil {
				return false, t.explain(what, err)
			}
		}
		return false, nil
	}
	if err == nil {
		err = cerr
	}
	if err != nil {
		return false, t.explain(what, err)
	}
	b = &pgx.Batch{}
	b.Queue(qLockWaitRelease)
	b.Queue(qRestoreLockTimeout, millis(t.opts.LockTimeout))
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return false, t.explain(what, err)
	}
	return true, nil
}
