package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

const backfillRepo = "Owner/Repo"

// openStore opens another Store (another pool) on db, closed with the test.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), db, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

func backfillSpec(key string) schema.BackfillSpec {
	return schema.BackfillSpec{Key: key, Repo: backfillRepo, Params: json.RawMessage(`{"repo":"Owner/Repo"}`)}
}

// addLedger writes a ledger row as an ingest leaves it and returns its id.
func addLedger(t *testing.T, st *store.Store, repo string, runID int64, attempt int, status schema.Status) int64 {
	t.Helper()
	var id int64
	require.NoError(t, st.Pool().QueryRow(context.Background(), `
		INSERT INTO ingests (repo, github_run_id, run_attempt, status, target, started_at, finished_at)
		VALUES ($1, $2, $3, $4, 'test', now(), now()) RETURNING id`, repo, runID, attempt, string(status)).Scan(&id))
	return id
}

// openPass begins a pass of its own key and queues runs in it.
func openPass(t *testing.T, st *store.Store, key string, runs ...schema.BackfillRun) schema.BackfillPass {
	t.Helper()
	p, err := st.OpenBackfill(context.Background(), backfillSpec(key))
	require.NoError(t, err)
	require.True(t, p.Created)
	_, err = st.EnqueueBackfill(context.Background(), p.ID, runs)
	require.NoError(t, err)
	return p
}

func mustClaim(t *testing.T, st *store.Store, passID int64) *store.BackfillClaim {
	t.Helper()
	c, err := st.ClaimBackfillRun(context.Background(), passID)
	require.NoError(t, err)
	require.NotNil(t, c, "a pending run is claimable")
	return c
}

func requireNoClaim(t *testing.T, st *store.Store, passID int64) {
	t.Helper()
	c, err := st.ClaimBackfillRun(context.Background(), passID)
	require.NoError(t, err)
	if c != nil {
		c.Release(context.Background())
		t.Fatalf("claimed run %d: want none claimable", c.Run.RunID)
	}
}

func settle(t *testing.T, c *store.BackfillClaim, state schema.BackfillState) {
	t.Helper()
	require.NoError(t, c.Settle(context.Background(), schema.BackfillOutcome{State: state, Worker: "w"}))
}

func TestOpenBackfillJoinsTheActivePassOfItsKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	mark := addLedger(t, st, backfillRepo, 1, 1, schema.StatusSucceeded)

	first, err := st.OpenBackfill(ctx, backfillSpec("a"))
	require.NoError(t, err)
	require.True(t, first.Created)
	require.Equal(t, mark, first.LedgerMark, "the mark is the newest ledger id")
	require.Equal(t, backfillRepo, first.Repo)

	addLedger(t, st, backfillRepo, 2, 1, schema.StatusSucceeded)
	joined, err := st.OpenBackfill(ctx, backfillSpec("a"))
	require.NoError(t, err)
	require.False(t, joined.Created)
	require.Equal(t, first.ID, joined.ID)
	require.Equal(t, mark, joined.LedgerMark, "joining keeps the pass's mark")
	require.Equal(t, first.StartedAt, joined.StartedAt)

	other, err := st.OpenBackfill(ctx, backfillSpec("b"))
	require.NoError(t, err)
	require.True(t, other.Created, "another key begins a pass of its own")
	require.NotEqual(t, first.ID, other.ID)

	// The pass finishes (nothing queued is pending): the next open begins
	// a new pass with a fresh mark.
	done, err := st.FinishBackfill(ctx, first.ID)
	require.NoError(t, err)
	require.True(t, done)
	newMark := addLedger(t, st, backfillRepo, 3, 1, schema.StatusSucceeded)
	next, err := st.OpenBackfill(ctx, backfillSpec("a"))
	require.NoError(t, err)
	require.True(t, next.Created)
	require.NotEqual(t, first.ID, next.ID)
	require.Equal(t, newMark, next.LedgerMark)
}

func TestOpenBackfillConcurrentOpensMakeOnePass(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	stores := []*store.Store{openStore(t, db), openStore(t, db)}
	const workers = 8
	passes := make([]schema.BackfillPass, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			<-start
			passes[i], errs[i] = stores[i%2].OpenBackfill(context.Background(), backfillSpec("same"))
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range workers {
		require.NoError(t, errs[i])
		require.Equal(t, passes[0].ID, passes[i].ID, "worker %d joined the same pass", i)
		if passes[i].Created {
			created++
		}
	}
	require.Equal(t, 1, created, "exactly one worker began the pass")
	var n int
	require.NoError(t, stores[0].Pool().QueryRow(context.Background(), `SELECT count(*) FROM backfills`).Scan(&n))
	require.Equal(t, 1, n)
}

func TestEnqueueBackfillKeepsSettledRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	p, err := st.OpenBackfill(ctx, backfillSpec("k"))
	require.NoError(t, err)

	added, err := st.EnqueueBackfill(ctx, p.ID, nil)
	require.NoError(t, err)
	require.Empty(t, added)

	added, err = st.EnqueueBackfill(ctx, p.ID, []schema.BackfillRun{
		{RunID: 10, Attempt: 1},
		{RunID: 20, Attempt: 2, Tree: "/trees/20"},
		{RunID: 30, Attempt: 1, State: schema.BackfillSkipped, Detail: "attempt 1 already ingested"},
	})
	require.NoError(t, err)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillPending: 2, schema.BackfillSkipped: 1}, added)

	c := mustClaim(t, st, p.ID)
	require.Equal(t, int64(10), c.Run.RunID)
	settle(t, c, schema.BackfillIngested)

	// Queued again, differently: only the new run is added, and every run
	// already queued keeps its state.
	added, err = st.EnqueueBackfill(ctx, p.ID, []schema.BackfillRun{
		{RunID: 10, Attempt: 1},
		{RunID: 20, Attempt: 2, State: schema.BackfillSkipped, Detail: "now skipped"},
		{RunID: 30, Attempt: 1},
		{RunID: 40, State: schema.BackfillFailed, Detail: "could not be looked up"},
	})
	require.NoError(t, err)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillFailed: 1}, added)

	counts, err := st.BackfillCounts(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, schema.BackfillCounts{Total: 4, Pending: 1, Ingested: 1, Skipped: 1, Failed: 1, Worked: 1}, counts)
	require.EqualValues(t, 3, counts.Done())

	settled, err := st.BackfillSettled(ctx, p.ID, schema.BackfillSkipped, schema.BackfillFailed)
	require.NoError(t, err)
	require.Len(t, settled, 2)
	byRun := map[int64]schema.BackfillSettled{}
	for _, s := range settled {
		require.False(t, s.FinishedAt.IsZero(), "a run queued settled is finished")
		byRun[s.RunID] = s
	}
	require.Equal(t, "attempt 1 already ingested", byRun[30].Detail)
	require.Equal(t, schema.BackfillSkipped, byRun[30].State)
	require.Equal(t, "could not be looked up", byRun[40].Detail)
	require.Equal(t, 0, byRun[40].Attempt)

	c = mustClaim(t, st, p.ID)
	require.Equal(t, schema.BackfillRun{RunID: 20, Attempt: 2, Tree: "/trees/20"}, c.Run, "run 20 is still pending as first queued")
	c.Release(ctx)
}

func TestClaimBackfillRunServesOldestFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	t1 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	p := openPass(t, st, "k",
		schema.BackfillRun{RunID: 5, Attempt: 1, CreatedAt: t2},
		schema.BackfillRun{RunID: 3, Attempt: 1},
		schema.BackfillRun{RunID: 9, Attempt: 1, CreatedAt: t1},
		schema.BackfillRun{RunID: 1, Attempt: 3},
		schema.BackfillRun{RunID: 7, Attempt: 2, CreatedAt: t1.In(time.FixedZone("X", 3600)), Tree: "/t/7"},
	)
	var order []int64
	for {
		c, err := st.ClaimBackfillRun(ctx, p.ID)
		require.NoError(t, err)
		if c == nil {
			break
		}
		if c.Run.RunID == 7 {
			require.Equal(t, schema.BackfillRun{RunID: 7, Attempt: 2, CreatedAt: t1, Tree: "/t/7"}, c.Run)
		}
		if c.Run.RunID == 1 {
			require.True(t, c.Run.CreatedAt.IsZero())
			require.Equal(t, 3, c.Run.Attempt)
		}
		order = append(order, c.Run.RunID)
		settle(t, c, schema.BackfillIngested)
	}
	require.Equal(t, []int64{7, 9, 5, 1, 3}, order, "oldest created first, then by id; runs of unknown creation last")
}

func TestClaimsOfTwoStoresNeverMeet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	a, b := openStore(t, db), openStore(t, db)
	p := openPass(t, a, "k", schema.BackfillRun{RunID: 1, Attempt: 1}, schema.BackfillRun{RunID: 2, Attempt: 1})

	ca := mustClaim(t, a, p.ID)
	cb := mustClaim(t, b, p.ID)
	require.Equal(t, int64(1), ca.Run.RunID)
	require.Equal(t, int64(2), cb.Run.RunID, "a held run is skipped")
	requireNoClaim(t, a, p.ID)
	requireNoClaim(t, b, p.ID)

	// Released untouched: pending again, for the other store.
	ca.Release(ctx)
	again := mustClaim(t, b, p.ID)
	require.Equal(t, int64(1), again.Run.RunID)
	counts, err := a.BackfillCounts(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, schema.BackfillCounts{Total: 2, Pending: 2}, counts, "claimed runs are pending until settled")
	again.Release(ctx)
	cb.Release(ctx)
}

func TestClaimOfATerminatedConnectionIsReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	dying, other := openStore(t, db), openStore(t, db)
	p := openPass(t, other, "k", schema.BackfillRun{RunID: 1, Attempt: 1})

	// other holds no transaction open: the only backend idle in a
	// transaction on this database is the claim's.
	claim := mustClaim(t, dying, p.ID)
	requireNoClaim(t, other, p.ID)
	var pids []int32
	rows, err := other.Pool().Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'idle in transaction'`)
	require.NoError(t, err)
	for rows.Next() {
		var pid int32
		require.NoError(t, rows.Scan(&pid))
		pids = append(pids, pid)
	}
	require.NoError(t, rows.Err())
	require.Len(t, pids, 1, "one backend holds the claim")
	var ok bool
	require.NoError(t, other.Pool().QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pids[0]).Scan(&ok))
	require.True(t, ok)

	// The server rolls the claim back once the backend is gone; the run is
	// claimable by another store.
	var next *store.BackfillClaim
	require.Eventually(t, func() bool {
		c, err := other.ClaimBackfillRun(ctx, p.ID)
		require.NoError(t, err)
		next = c
		return c != nil
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, int64(1), next.Run.RunID)

	// The dead worker cannot settle what it no longer holds.
	require.Error(t, claim.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillIngested}))
	settle(t, next, schema.BackfillIngested)
	counts, err := other.BackfillCounts(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, schema.BackfillCounts{Total: 1, Ingested: 1, Worked: 1}, counts)
}

func TestSettleRecordsTheOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	ingestID := addLedger(t, st, backfillRepo, 1, 2, schema.StatusCompletedWithFailures)
	p := openPass(t, st, "k", schema.BackfillRun{RunID: 1, Attempt: 1}, schema.BackfillRun{RunID: 2, Attempt: 4})

	c := mustClaim(t, st, p.ID)
	require.NoError(t, c.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillIngested, Attempt: 2, IngestID: ingestID,
		IngestStatus: schema.StatusCompletedWithFailures, Worker: "host:1", Duration: 1500 * time.Millisecond}))
	c = mustClaim(t, st, p.ID)
	require.Equal(t, int64(2), c.Run.RunID, "a settled run is not claimable")
	require.NoError(t, c.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillFailed, Worker: "host:2", Detail: "fetch: gone"}))
	requireNoClaim(t, st, p.ID)

	type row struct {
		attempt        int
		state          string
		ingestID       *int64
		status, worker *string
		detail         *string
		ms             int64
		finished       bool
	}
	read := func(runID int64) row {
		var r row
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT run_attempt, state, ingest_id, ingest_status, worker, detail,
			duration_ms, finished_at IS NOT NULL FROM backfill_runs WHERE backfill_id = $1 AND github_run_id = $2`, p.ID, runID).
			Scan(&r.attempt, &r.state, &r.ingestID, &r.status, &r.worker, &r.detail, &r.ms, &r.finished))
		return r
	}
	one := read(1)
	require.Equal(t, 2, one.attempt, "the attempt worked on replaces the listed one")
	require.Equal(t, "ingested", one.state)
	require.Equal(t, ingestID, *one.ingestID)
	require.Equal(t, "completed_with_failures", *one.status)
	require.Equal(t, "host:1", *one.worker)
	require.Nil(t, one.detail)
	require.EqualValues(t, 1500, one.ms)
	require.True(t, one.finished)

	two := read(2)
	require.Equal(t, 4, two.attempt, "attempt 0 keeps the listed one")
	require.Equal(t, "failed", two.state)
	require.Nil(t, two.ingestID)
	require.Nil(t, two.status)
	require.Equal(t, "fetch: gone", *two.detail)
	require.True(t, two.finished)

	failed, err := st.BackfillSettled(ctx, p.ID, schema.BackfillFailed)
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Equal(t, schema.BackfillSettled{RunID: 2, Attempt: 4, State: schema.BackfillFailed, Worker: "host:2", Detail: "fetch: gone",
		FinishedAt: failed[0].FinishedAt}, failed[0])
	all, err := st.BackfillSettled(ctx, p.ID, schema.BackfillIngested, schema.BackfillFailed)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, schema.BackfillSettled{RunID: 1, Attempt: 2, State: schema.BackfillIngested, IngestID: ingestID,
		IngestStatus: schema.StatusCompletedWithFailures, Worker: "host:1", Duration: 1500 * time.Millisecond,
		FinishedAt: all[0].FinishedAt}, all[0], "settled order")
}

func TestFinishBackfillOnlyWhenNothingIsPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	p := openPass(t, st, "k", schema.BackfillRun{RunID: 1, Attempt: 1}, schema.BackfillRun{RunID: 2, Attempt: 1})
	finish := func() bool {
		t.Helper()
		done, err := st.FinishBackfill(ctx, p.ID)
		require.NoError(t, err)
		return done
	}
	require.False(t, finish())
	settle(t, mustClaim(t, st, p.ID), schema.BackfillIngested)
	require.False(t, finish())

	held := mustClaim(t, st, p.ID)
	require.False(t, finish(), "a claimed run is still pending")
	settle(t, held, schema.BackfillFailed)
	require.True(t, finish())
	require.True(t, finish(), "a finished pass stays finished")

	var finished bool
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT finished_at IS NOT NULL FROM backfills WHERE id = $1`, p.ID).Scan(&finished))
	require.True(t, finished)
	joined, err := st.OpenBackfill(ctx, backfillSpec("k"))
	require.NoError(t, err)
	require.True(t, joined.Created, "a finished pass is not joined")
}

func TestLedgerHits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	r1a1 := addLedger(t, st, "owner/REPO", 1, 1, schema.StatusSucceeded)
	addLedger(t, st, backfillRepo, 1, 2, schema.StatusAborted)
	addLedger(t, st, backfillRepo, 2, 1, schema.StatusCompletedWithFailures)
	r2a1 := addLedger(t, st, backfillRepo, 2, 1, schema.StatusSucceeded)
	r2a3 := addLedger(t, st, backfillRepo, 2, 3, schema.StatusCompletedWithFailures)
	addLedger(t, st, "other/repo", 3, 1, schema.StatusSucceeded)
	addLedger(t, st, backfillRepo, 4, 1, schema.Status("running"))
	r5 := addLedger(t, st, backfillRepo, 5, 1, schema.StatusSucceeded)

	hit := func(run int64, attempt int, id int64, status schema.Status) schema.LedgerHit {
		return schema.LedgerHit{RunID: run, Attempt: attempt, IngestID: id, Status: status}
	}
	tests := []struct {
		name  string
		runs  []int64
		after int64
		want  map[int64]map[int]schema.LedgerHit
	}{
		{"every run", []int64{1, 2, 3, 4, 5, 6}, 0, map[int64]map[int]schema.LedgerHit{
			1: {1: hit(1, 1, r1a1, schema.StatusSucceeded)},
			2: {1: hit(2, 1, r2a1, schema.StatusSucceeded), 3: hit(2, 3, r2a3, schema.StatusCompletedWithFailures)},
			5: {1: hit(5, 1, r5, schema.StatusSucceeded)},
		}},
		{"only the runs asked", []int64{5}, 0, map[int64]map[int]schema.LedgerHit{5: {1: hit(5, 1, r5, schema.StatusSucceeded)}}},
		{"after a mark", []int64{1, 2, 3, 4, 5}, r2a1, map[int64]map[int]schema.LedgerHit{
			2: {3: hit(2, 3, r2a3, schema.StatusCompletedWithFailures)},
			5: {1: hit(5, 1, r5, schema.StatusSucceeded)},
		}},
		{"after everything", []int64{1, 2, 5}, r5, map[int64]map[int]schema.LedgerHit{}},
		{"no runs", nil, 0, map[int64]map[int]schema.LedgerHit{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := st.LedgerHits(ctx, "OWNER/repo", tc.runs, tc.after)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// A listing can name a run twice (pages shift while GitHub lists): the
// queue holds it once, as first listed.
func TestEnqueueBackfillRunListedTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	p, err := st.OpenBackfill(ctx, backfillSpec("k"))
	require.NoError(t, err)
	added, err := st.EnqueueBackfill(ctx, p.ID, []schema.BackfillRun{{RunID: 1, Attempt: 1}, {RunID: 2, Attempt: 1}, {RunID: 1, Attempt: 2}})
	require.NoError(t, err)
	require.Equal(t, map[schema.BackfillState]int64{schema.BackfillPending: 2}, added)
	c := mustClaim(t, st, p.ID)
	require.Equal(t, schema.BackfillRun{RunID: 1, Attempt: 1}, c.Run)
	c.Release(ctx)
}

func TestRecentBackfillsAndIngests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	first := addLedger(t, st, backfillRepo, 1, 1, schema.StatusSucceeded)
	second := addLedger(t, st, backfillRepo, 2, 1, schema.StatusAborted)
	_, err := st.Pool().Exec(ctx, `UPDATE ingests SET summary = '{"status": "aborted", "abortReason": "boom"}', error = 'boom',
		duration_ms = 1200 WHERE id = $1`, second)
	require.NoError(t, err)

	done := openPass(t, st, "done", schema.BackfillRun{RunID: 1, Attempt: 1})
	c := mustClaim(t, st, done.ID)
	require.NoError(t, c.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillIngested, IngestID: first}))
	finished, err := st.FinishBackfill(ctx, done.ID)
	require.NoError(t, err)
	require.True(t, finished)
	active := openPass(t, st, "active", schema.BackfillRun{RunID: 2, Attempt: 1}, schema.BackfillRun{RunID: 3, State: schema.BackfillSkipped})
	newer := openPass(t, st, "newer")
	done2, err := st.FinishBackfill(ctx, newer.ID)
	require.NoError(t, err)
	require.True(t, done2)

	infos, err := st.RecentBackfills(ctx, 10)
	require.NoError(t, err)
	require.Len(t, infos, 3)
	require.Equal(t, []int64{active.ID, newer.ID, done.ID}, []int64{infos[0].Pass.ID, infos[1].Pass.ID, infos[2].Pass.ID},
		"unfinished first, then newest")
	require.True(t, infos[0].Pass.FinishedAt.IsZero())
	require.False(t, infos[1].Pass.FinishedAt.IsZero())
	require.Equal(t, schema.BackfillCounts{Total: 2, Pending: 1, Skipped: 1}, infos[0].Counts)
	require.Equal(t, schema.BackfillCounts{}, infos[1].Counts, "a pass without runs")
	require.Equal(t, schema.BackfillCounts{Total: 1, Ingested: 1}, infos[2].Counts)
	require.Equal(t, "done", infos[2].Pass.Key)
	require.Equal(t, second, infos[2].Pass.LedgerMark)
	limited, err := st.RecentBackfills(ctx, 1)
	require.NoError(t, err)
	require.Len(t, limited, 1)

	recs, err := st.RecentIngests(ctx, 10, 0)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, second, recs[0].ID, "newest first")
	require.Equal(t, schema.StatusAborted, recs[0].Status)
	require.Equal(t, "boom", recs[0].Error)
	require.Equal(t, 1200*time.Millisecond, recs[0].Duration)
	require.NotNil(t, recs[0].Summary)
	require.Equal(t, "boom", recs[0].Summary.AbortReason)
	require.Zero(t, recs[0].BackfillID)
	require.Equal(t, first, recs[1].ID)
	require.Nil(t, recs[1].Summary)
	require.Equal(t, done.ID, recs[1].BackfillID, "the pass that ingested it")

	one, err := st.RecentIngests(ctx, 10, 1)
	require.NoError(t, err)
	require.Len(t, one, 1)
	require.Equal(t, first, one[0].ID)
	limitedRecs, err := st.RecentIngests(ctx, 1, 0)
	require.NoError(t, err)
	require.Len(t, limitedRecs, 1)
}

// A claim is an idle transaction for as long as its run is ingested: a
// server (or database) idle_in_transaction_session_timeout must not end
// it. The test has to wait past the timeout: no signal stands for it.
func TestClaimOutlivesIdleInTransactionTimeout(t *testing.T) {
	// Not parallel: an idle-in-transaction timeout of milliseconds must
	// not be reached by the claim's own statements on a busy machine.
	ctx := context.Background()
	db := pgtest.New(t)
	admin := openStore(t, db)
	_, err := admin.Pool().Exec(ctx, `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET idle_in_transaction_session_timeout = %L', current_database(), '100ms');
	END $$`)
	require.NoError(t, err)
	st := openStore(t, db) // its connections start with the database's setting
	var timeout string
	require.NoError(t, st.Pool().QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&timeout))
	require.Equal(t, "100ms", timeout)
	p := openPass(t, st, "k", schema.BackfillRun{RunID: 1, Attempt: 1})

	c := mustClaim(t, st, p.ID)
	time.Sleep(time.Second) // an ingest ten times longer than the timeout
	require.NoError(t, c.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillIngested}))
	counts, err := st.BackfillCounts(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, schema.BackfillCounts{Total: 1, Ingested: 1}, counts)
}

// TestBackfillNoteworthy: of a pass's settled runs, only the failed ones
// (claimed or queued failed) and those a worker skipped for another than
// the routine reason are listed.
func TestBackfillNoteworthy(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgtest.New(t))
	ctx := context.Background()
	at := func(h int) time.Time { return time.Date(2026, 6, 1, h, 0, 0, 0, time.UTC) }
	p := openPass(t, st, "noteworthy",
		schema.BackfillRun{RunID: 1, Attempt: 1, CreatedAt: at(1)},
		schema.BackfillRun{RunID: 2, Attempt: 1, CreatedAt: at(2)},
		schema.BackfillRun{RunID: 3, Attempt: 1, CreatedAt: at(3)},
		schema.BackfillRun{RunID: 4, Attempt: 1, CreatedAt: at(4)},
		schema.BackfillRun{RunID: 5, Attempt: 1, State: schema.BackfillSkipped, Detail: "routine: queued settled"},
		schema.BackfillRun{RunID: 6, State: schema.BackfillFailed, Detail: "look up the run: 404"})
	for _, o := range []schema.BackfillOutcome{
		{State: schema.BackfillIngested, Worker: "w"},
		{State: schema.BackfillSkipped, Worker: "w", Detail: "routine: found in the ledger"},
		{State: schema.BackfillSkipped, Worker: "w", Detail: "artifacts expired"},
		{State: schema.BackfillFailed, Worker: "w", Detail: "fetch: 502"},
	} {
		require.NoError(t, mustClaim(t, st, p.ID).Settle(ctx, o))
	}
	got, err := st.BackfillNoteworthy(ctx, p.ID, "routine: ")
	require.NoError(t, err)
	var runs []int64
	for _, r := range got {
		runs = append(runs, r.RunID)
	}
	require.ElementsMatch(t, []int64{3, 4, 6}, runs)
}
