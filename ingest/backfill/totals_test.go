package backfill_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "rerun with -update")
	require.Equal(t, string(want), got, "%s differs; rerun with -update and review", path)
}

// listed is a Source that lists fixed runs and fetches none.
type listed []schema.BackfillRun

func (l listed) List(context.Context) ([]schema.BackfillRun, error) {
	return append([]schema.BackfillRun(nil), l...), nil
}

func (l listed) Fetch(_ context.Context, run schema.BackfillRun) (*backfill.Fetched, error) {
	panic("a plan fetches nothing")
}

// addLedger writes a finished ledger row and returns its id.
func (e *env) addLedger(repo string, runID int64, attempt int, status schema.Status) int64 {
	e.t.Helper()
	var id int64
	require.NoError(e.t, e.db.QueryRow(context.Background(), `
		INSERT INTO ingests (repo, github_run_id, run_attempt, status, target, started_at, finished_at)
		VALUES ($1, $2, $3, $4, 'test', now(), now()) RETURNING id`, repo, runID, attempt, string(status)).Scan(&id))
	return id
}

func TestPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addLedger(strings.ToLower(testRepo), 100, 1, schema.StatusSucceeded) // #1
	e.addLedger(testRepo, 200, 1, schema.StatusSucceeded)                  // #2: an older attempt
	e.addLedger(testRepo, 300, 1, schema.StatusAborted)                    // #3: not ingested
	e.addLedger(testRepo, 400, 2, schema.StatusCompletedWithFailures)      // #4
	e.addLedger("someone/else", 500, 1, schema.StatusSucceeded)            // #5: another repository
	t0 := time.Date(2026, 6, 1, 8, 30, 0, 0, time.FixedZone("CEST", 2*3600))
	src := listed{
		{RunID: 600, Attempt: 1},
		{RunID: 500, Attempt: 1, CreatedAt: t0.Add(4 * time.Hour)},
		{RunID: 400, Attempt: 2, CreatedAt: t0.Add(3 * time.Hour)},
		{RunID: 300, Attempt: 1, CreatedAt: t0.Add(2 * time.Hour)},
		{RunID: 200, Attempt: 2, CreatedAt: t0.Add(time.Hour)},
		{RunID: 100, Attempt: 1, CreatedAt: t0},
		{RunID: 150, Attempt: 1, CreatedAt: t0, State: schema.BackfillSkipped, Detail: "the run is in_progress, not completed"},
		{RunID: 50, State: schema.BackfillFailed, Detail: "look up: run 50: 404 Not Found"},
	}
	for _, reingest := range []bool{false, true} {
		name := "plan.golden"
		if reingest {
			name = "plan_reingest.golden"
		}
		t.Run(name, func(t *testing.T) {
			p := e.params(reingest)
			plan, err := backfill.Plan(context.Background(), p, e.st, src)
			require.NoError(t, err)
			var out strings.Builder
			require.NoError(t, backfill.WritePlan(&out, plan))
			golden(t, name, out.String())
		})
	}
	var passes, queued int
	require.NoError(t, e.db.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM backfills), (SELECT count(*) FROM backfill_runs)`).Scan(&passes, &queued))
	require.Zero(t, passes+queued, "a plan writes nothing")
}

func TestWriteResultGolden(t *testing.T) {
	t.Parallel()
	res := &backfill.Result{
		Pass:   schema.BackfillPass{ID: 7, Repo: testRepo, Reingest: true},
		Listed: 12,
		Queued: map[schema.BackfillState]int64{schema.BackfillPending: 9, schema.BackfillSkipped: 2, schema.BackfillFailed: 1},
		Totals: backfill.Totals{Ingested: 3, WithFailures: 1, Skipped: 1, Failed: 1,
			Rows: schema.Rows{Benchmark: schema.Counts{New: 120, Duplicate: 4, Skipped: 30, Unmapped: 2, Failed: 1},
				Eval: schema.Counts{New: 6}, Trace: schema.Counts{Skipped: 3}, Power: schema.Counts{New: 2, Failed: 1}},
			EvalSamplesNew: 2638, GPUMetricSamplesNew: 14400, ChangelogEntries: 3},
		Counts:   schema.BackfillCounts{Total: 12, Pending: 4, Ingested: 5, Skipped: 2, Failed: 1},
		Failures: []schema.BackfillSettled{{RunID: 31000000100, Attempt: 2, State: schema.BackfillFailed, IngestID: 41, IngestStatus: schema.StatusAborted, Detail: "ingest: read benchmark files: context deadline exceeded"}},
		Took:     83*time.Second + 456789*time.Microsecond,
	}
	var out strings.Builder
	require.NoError(t, backfill.WriteResult(&out, res, "host:42"))
	golden(t, "result.golden", out.String())
}

// TestPlanOverAnOpenPass: when a pass of the same parameters is open (an
// interrupted backfill), the dry run shows what resuming it does: runs it
// settled stay settled — a failed one is not retried before the pass ends
// — and the rest are pending in it.
func TestPlanOverAnOpenPass(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	p := e.params(false)
	spec, err := p.Spec()
	require.NoError(t, err)
	pass, err := e.st.OpenBackfill(ctx, spec)
	require.NoError(t, err)
	_, err = e.st.EnqueueBackfill(ctx, pass.ID, []schema.BackfillRun{
		{RunID: 700, Attempt: 1, CreatedAt: time.Date(2026, 6, 1, 1, 0, 0, 0, time.UTC)},
		{RunID: 800, Attempt: 1, CreatedAt: time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)},
	})
	require.NoError(t, err)
	claim, err := e.st.ClaimBackfillRun(ctx, pass.ID)
	require.NoError(t, err)
	require.Equal(t, int64(700), claim.Run.RunID)
	require.NoError(t, claim.Settle(ctx, schema.BackfillOutcome{State: schema.BackfillFailed, Attempt: 1, Detail: "fetch: 502 Bad Gateway"}))

	src := listed{
		{RunID: 700, Attempt: 1, CreatedAt: time.Date(2026, 6, 1, 1, 0, 0, 0, time.UTC)},
		{RunID: 800, Attempt: 1, CreatedAt: time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)},
		{RunID: 900, Attempt: 1, CreatedAt: time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC)},
	}
	plan, err := backfill.Plan(ctx, p, e.st, src)
	require.NoError(t, err)
	var actions []string
	for _, r := range plan {
		actions = append(actions, r.Action)
	}
	want := []string{
		"settled in open pass #" + itoa(pass.ID) + ": failed: fetch: 502 Bad Gateway",
		"ingest (resuming open pass #" + itoa(pass.ID) + ")",
		"ingest (resuming open pass #" + itoa(pass.ID) + ")",
	}
	require.Equal(t, want, actions)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
