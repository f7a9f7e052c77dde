package backfill_test

// Edge cases of the backfill worker over real ingests: purged runs, the
// ETA, lost claims, and trees that name their run badly.

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/schema"
)

// TestPurgedRunIsNotCountedIngested: a run the run overrides purge writes nothing but its ledger
// row (status purged): it is settled skipped with the reason, not counted ingested in the totals,
// the pass or `ingest status`.
func TestPurgedRunIsNotCountedIngested(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tree(runOld, 1, 0)
	e.tree(runNew, 1, 1)
	ov, err := overrides.Load(overrides.Extension{Data: []byte(fmt.Sprintf(
		`{"purgedRuns": [{"runId": %d, "reason": "bad hardware"}]}`, runOld))})
	require.NoError(t, err)
	e.ingest = e.ingester(ov)

	res, rec := e.mustRun(false)
	require.Equal(t, append([]ledgerRow{{RunID: runOld, Attempt: 1, Status: "purged"}}, succeeded(runNew)...), e.ledger(),
		"the purged run is in the ledger as purged")
	require.Equal(t, []int64{runNew}, rec.runs(schema.BackfillIngested), "only the run written is settled ingested")
	require.Equal(t, 1, res.Totals.Ingested, "the totals count a purged run as ingested")
	require.Equal(t, int64(1), res.Counts.Ingested, "the pass counts a purged run as ingested")
	var n int
	require.NoError(t, e.db.QueryRow(context.Background(),
		`SELECT count(*) FROM backfill_runs WHERE state = 'ingested' AND ingest_id IS NULL`).Scan(&n))
	require.Zero(t, n, "a run settled ingested has the ledger row that wrote it")
}

func (e *env) mergeRunsInLedger() []int64 {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(),
		`SELECT coalesce(merge_run_id, 0) FROM ingests WHERE status = 'succeeded' ORDER BY id`)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		require.NoError(e.t, rows.Scan(&id))
		out = append(out, id)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// startHookProgress is a etaProgress that runs a hook once the runs
// are queued, before the first claim.
type startHookProgress struct {
	etaProgress
	start func()
}

func (p *startHookProgress) Start(schema.BackfillPass, schema.BackfillCounts) { p.start() }

// TestETAIgnoresClaimTimeSkips: a run a worker settles at its claim because the ledger shows it
// ingested meanwhile costs a ledger read, not an ingest: ten such runs and one ingest of a minute
// leave the ETA of the one run left at about a minute.
func TestETAIgnoresClaimTimeSkips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := &manualClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	var runs []schema.BackfillRun
	for i := range 12 {
		runs = append(runs, schema.BackfillRun{RunID: int64(1 + i), Attempt: 1, CreatedAt: base.Add(time.Duration(i) * time.Hour)})
	}
	prog := &startHookProgress{start: func() {
		// Queued pending; the ten oldest are then ingested elsewhere.
		for i := range 10 {
			e.addLedger(testRepo, int64(1+i), 1, schema.StatusSucceeded)
		}
	}}
	ing := &stubIngester{before: func(context.Context, int) { clock.advance(time.Minute) }}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: testRepo, Source: "eta"},
		Worker: "test", Progress: prog, Log: e.log, Now: clock.Now}, e.st, listSource{dir: t.TempDir(), runs: runs}, ing.ingest)
	require.NoError(t, err)
	require.Equal(t, 10, res.Totals.Skipped, "the ten runs are skipped at their claim")
	require.Len(t, ing.calls, 2)
	require.Len(t, prog.etas, 12)
	require.GreaterOrEqual(t, prog.etas[10], 30*time.Second,
		"one run left at a minute a run: the ETA after the first ingest is %s", prog.etas[10])
}

// TestLostClaimOvertakenByAnotherWorker: a worker whose claim is lost while it downloads is
// overtaken: another worker claims, ingests and commits the run. The first worker's fence fails
// once its ingest holds the run's lock, before any work, and writes no ledger row, so the newest
// summary of the run stays the other worker's success.
func TestLostClaimOvertakenByAnotherWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tree(runOld, 1, 0)
	realIngest := e.ingest
	overtaken := false
	e.ingest = func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		if !overtaken {
			overtaken = true
			e.killClaim(ctx)
			// A second worker of the pass takes the run over meanwhile.
			e.ingest = realIngest
			res, err := e.run(context.Background(), false, nil, nil)
			require.NoError(t, err)
			require.Equal(t, 1, res.Totals.Ingested, "the second worker ingests the run")
		}
		return realIngest(ctx, cfg, dir)
	}
	_, err := e.run(context.Background(), false, nil, nil)
	require.Error(t, err, "the first worker cannot record the outcome of a claim it lost")
	require.Equal(t, succeeded(runOld)[0], e.ledger()[0], "the second worker's ingest is in the ledger")
	sum, err := e.st.LatestSummary(context.Background(), runOld, 0)
	require.NoError(t, err)
	require.Equal(t, schema.StatusSucceeded, sum.Status,
		"the newest summary of an ingested run is an abort: %s (ledger %v)", sum.AbortReason, e.ledger())
}

// TestFromDirMergeNamedTreeWithoutMetadata: a tree named SOURCE-merge-MERGE (the cache's name of a
// reused sweep's tree) without artifacts.json or reuse metadata is left out with a warning, not
// ingested as the source run's own run.
func TestFromDirMergeNamedTreeWithoutMetadata(t *testing.T) {
	t.Parallel()
	const mergeRun = int64(30000000900)
	e := newEnv(t)
	dir := filepath.Join(e.root, fmt.Sprintf("%d-merge-%d", runOld, mergeRun))
	_, err := generate.Write(dir, generate.Options{Points: 4, RunID: runOld, Attempt: 1, Seed: 7, NoListing: true})
	require.NoError(t, err)
	e.mustRun(false)
	for _, m := range e.mergeRunsInLedger() {
		require.NotEqual(t, runOld, m, "the reused sweep's tree was ingested as the source run's own run")
	}
}
