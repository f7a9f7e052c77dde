package backfill_test

// Second review of the backfill fixes: each test states what the README
// or the code's own comments promise and fails while the code breaks it.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// TestReview2PurgedRunIsNotCountedIngested: a run the run overrides purge
// is written nowhere (ingest.Run returns a succeeded summary with no
// ledger row, IngestID 0). The worker settles it `ingested` with no ingest
// id and counts it in "N ingested": the totals, the pass counts and
// `ingest status` report a run ingested that the ledger does not hold —
// and since the ledger never holds it, every later pass downloads and
// "ingests" it again.
func TestReview2PurgedRunIsNotCountedIngested(t *testing.T) {
	e := newEnv(t)
	e.tree(runOld, 1, 0)
	e.tree(runNew, 1, 1)
	ov, err := overrides.Load(strings.NewReader(fmt.Sprintf(
		`{"purgedRuns": [{"runId": %d, "reason": "review2: bad hardware"}]}`, runOld)))
	require.NoError(t, err)
	cat, err := catalog.Default()
	require.NoError(t, err)
	deps := ingest.Deps{Store: ingest.AdaptStore[*store.RunTx](e.st), Catalog: cat, Normalizer: benchmark.NewNormalizer(cat),
		Overrides: ov, Log: e.log, Now: time.Now}
	e.ingest = func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		tree, err := source.Open(ctx, dir, e.log)
		if err != nil {
			return nil, err
		}
		defer tree.Close()
		return ingest.Run(ctx, cfg, tree, deps)
	}

	res, rec := e.mustRun(false)
	require.Equal(t, succeeded(runNew), e.ledger(), "the purged run is not in the ledger")
	require.Equal(t, []int64{runNew}, rec.runs(schema.BackfillIngested), "only the run written is settled ingested")
	require.Equal(t, 1, res.Totals.Ingested, "the totals count a purged run as ingested")
	require.Equal(t, int64(1), res.Counts.Ingested, "the pass counts a purged run as ingested")
	var n int
	require.NoError(t, e.st.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM backfill_runs WHERE state = 'ingested' AND ingest_id IS NULL`).Scan(&n))
	require.Zero(t, n, "a run settled ingested has the ledger row that wrote it")
}

func (e *env) mergeRunsInLedger() []int64 {
	e.t.Helper()
	rows, err := e.st.Pool().Query(context.Background(),
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

// review2StartProgress is a reviewProgress that runs a hook once the runs
// are queued, before the first claim.
type review2StartProgress struct {
	reviewProgress
	start func()
}

func (p *review2StartProgress) Start(schema.BackfillPass, schema.BackfillCounts) { p.start() }

// TestReview2ETACountsClaimTimeSkips: the fix counts "runs settled by a
// worker, not runs queued already settled" — but a run a worker settles
// at its claim, because the ledger shows it ingested meanwhile (by CI's
// `ingest run`, by an overlapping pass of other parameters, or by a
// worker whose claim was lost after its commit), takes a ledger read, not
// an ingest. Ten such runs and one ingest of a minute make the pace 11
// runs a minute: with one run left (a minute's work) the ETA shown is
// about five seconds.
func TestReview2ETACountsClaimTimeSkips(t *testing.T) {
	e := newEnv(t)
	clock := &reviewClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	var runs []schema.BackfillRun
	for i := range 12 {
		runs = append(runs, schema.BackfillRun{RunID: int64(1 + i), Attempt: 1, CreatedAt: base.Add(time.Duration(i) * time.Hour)})
	}
	prog := &review2StartProgress{start: func() {
		// Queued pending; the ten oldest are then ingested elsewhere.
		for i := range 10 {
			e.addLedger(testRepo, int64(1+i), 1, schema.StatusSucceeded)
		}
	}}
	ing := &reviewIngester{before: func(context.Context, int) { clock.advance(time.Minute) }}
	res, err := backfill.Run(t.Context(), backfill.Options{Params: backfill.Params{Repo: testRepo, Source: "review2-eta"},
		Worker: "review2", Progress: prog, Log: e.log, Now: clock.Now}, e.st, reviewListSource{dir: t.TempDir(), runs: runs}, ing.ingest)
	require.NoError(t, err)
	require.Equal(t, 10, res.Totals.Skipped, "the ten runs are skipped at their claim")
	require.Len(t, ing.calls, 2)
	require.Len(t, prog.etas, 12)
	require.GreaterOrEqual(t, prog.etas[10], 30*time.Second,
		"one run left at a minute a run: the ETA after the first ingest is %s", prog.etas[10])
}

// TestReview2LostClaimAbortAfterAnotherWorkersIngest: a worker whose claim
// is lost while it downloads (before its ingest takes the run's lock) is
// overtaken: another worker claims the run, ingests and commits it. The
// first worker then ingests the run anyway (every row a duplicate), its
// Fence fails, and its abort is recorded in the ledger — after the other
// worker's success. The newest ledger row of a fully ingested run now says
// "aborted, nothing written", and that is what `ingest report --run-id`
// (LatestSummary) and the top of `ingest status` show for it. A Fence
// failure is the backfill's own coordination, not an outcome of the run:
// it should abort without a ledger row (or the worker should re-check the
// ledger under the run's lock before ingesting).
func TestReview2LostClaimAbortAfterAnotherWorkersIngest(t *testing.T) {
	e := newEnv(t)
	e.tree(runOld, 1, 0)
	realIngest := e.ingest
	overtaken := false
	e.ingest = func(ctx context.Context, cfg ingest.Config, dir string) (*schema.Summary, error) {
		if !overtaken {
			overtaken = true
			var n int
			require.NoError(t, e.st.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`).Scan(&n))
			require.Equal(t, 1, n, "one claim is held")
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

// TestReview2FromDirMergeNamedTreeWithoutMetadata: a tree named
// SOURCE-merge-MERGE (the cache's name of a reused sweep's tree) that has
// neither artifacts.json nor reuse metadata is queued under SOURCE from
// its name — and ingested as SOURCE's own run: the ledger records merge
// run SOURCE, and the tree's changelog (the merge run's) is attributed to
// the source run. The name says which merge run it is: the tree should be
// ingested with that merge run, or left out with a warning like the other
// trees that name no run clearly.
func TestReview2FromDirMergeNamedTreeWithoutMetadata(t *testing.T) {
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
