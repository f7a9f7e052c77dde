package store_test

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// refDatabase builds a database in the reference's shape at level, filled
// with SmallOptions rows, and returns its URL and the fill's counts.
func refDatabase(t *testing.T, level string) (string, refdb.Stats) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, refdb.Create(ctx, conn, level))
	stats, err := refdb.Fill(ctx, conn, refdb.SmallOptions(7))
	require.NoError(t, err)
	return db, stats
}

// Adopt converts a reference database at each level: every row lands in
// our tables with its id, the reference's tables move to
// reference_archive, user_feedback and schema_migrations stay, and the
// schema is then ours (writes pass CheckWritable).
func TestAdoptLevels(t *testing.T) {
	for _, level := range refdb.Levels() {
		t.Run(level, func(t *testing.T) {
			ctx := context.Background()
			db, stats := refDatabase(t, level)
			st, err := store.Open(ctx, db, zaptest.NewLogger(t))
			require.NoError(t, err)
			defer st.Close()
			require.ErrorIs(t, st.CheckWritable(ctx), store.ErrForeignSchema)

			plan, err := st.PlanAdopt(ctx)
			require.NoError(t, err)
			require.Empty(t, plan.Refusals)
			require.Equal(t, level, plan.Newest)
			res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "SemiAnalysisAI/InferenceX", ToolVersion: "test"})
			require.NoError(t, err)
			require.Equal(t, stats.BenchmarkResults, res.Rows["benchmark_results"])
			require.Equal(t, stats.EvalSamples, res.Rows["eval_samples"])
			require.Equal(t, stats.WorkflowRuns, res.Rows["ingests"])

			require.NoError(t, st.CheckWritable(ctx))
			v, err := st.SchemaVersion(ctx)
			require.NoError(t, err)
			require.Equal(t, v.Latest, v.Version)

			var feedback, archived, refFiles int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM public.user_feedback),
				(SELECT count(*) FROM reference_archive.benchmark_results), (SELECT count(*) FROM public.schema_migrations)`).
				Scan(&feedback, &archived, &refFiles))
			require.Equal(t, stats.UserFeedback, feedback)
			require.Equal(t, stats.BenchmarkResults, archived)
			require.Positive(t, refFiles)

			// The foreign keys dropped for the copy are back.
			var fks int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f'
				AND conrelid IN ('public.eval_samples'::regclass, 'public.benchmark_results'::regclass)`).Scan(&fks))
			require.Equal(t, int64(7), fks)

			// The ids the site reads are the reference's.
			var missing int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM reference_archive.benchmark_results r
				LEFT JOIN public.benchmark_results b ON b.id = r.id AND b.metrics = r.metrics
					AND b.trace_replay_id IS NOT DISTINCT FROM r.trace_replay_id AND b.server_log_id IS NOT DISTINCT FROM r.server_log_id
				WHERE b.id IS NULL`).Scan(&missing))
			require.Zero(t, missing)
		})
	}
}

// dumpDatabase is pg_dump's plain text of the database: schema and rows.
func dumpDatabase(t *testing.T, db string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "pg_dump", "--no-owner", "--dbname", db).Output()
	require.NoError(t, err)
	// \restrict lines carry a random key per dump
	return regexp.MustCompile(`(?m)^\\(un)?restrict .*$`).ReplaceAllString(string(out), "")
}

// requireSameDump fails, without printing gigabytes, when got is not want.
func requireSameDump(t *testing.T, want, got, what string) {
	t.Helper()
	if want != got {
		t.Fatalf("%s: the database changed (%d bytes of dump before, %d after)", what, len(want), len(got))
	}
}

// An adopt stopped at any step — its context cancelled, as a kill of the
// process does, or its backend terminated — leaves the database exactly as
// it was before (one transaction), and a later adopt then succeeds.
func TestAdoptKilled(t *testing.T) {
	ctx := context.Background()
	db, _ := refDatabase(t, refdb.Level017)
	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	before := dumpDatabase(t, db)
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)

	var steps []string
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
		steps = append(steps, name)
		return errors.New("stop")
	}})
	require.Error(t, err)
	// Every step name once, by letting each run: collect them from a
	// rehearsal stopped only at the commit.
	steps = nil
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
		if !slices.Contains(steps, name) {
			steps = append(steps, name)
		}
		if name == "commit" {
			return errors.New("stop before commit")
		}
		return nil
	}})
	require.ErrorContains(t, err, "stop before commit")
	require.Contains(t, steps, "agentic_trace_replay")
	require.Contains(t, steps, "swap")
	requireSameDump(t, before, dumpDatabase(t, db), "stopped before its commit")

	for _, at := range []string{"migrations", "server_logs", "agentic_trace_replay", "eval_samples", "curves", "swap"} {
		t.Run("cancel at "+at, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := st.Adopt(cctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
				if name == at {
					cancel()
				}
				return nil
			}})
			require.Error(t, err)
			requireSameDump(t, before, dumpDatabase(t, db), t.Name())
		})
	}
	t.Run("backend terminated", func(t *testing.T) {
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
			if name == "eval_samples" {
				_, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`)
				return err
			}
			return nil
		}})
		require.Error(t, err)
		requireSameDump(t, before, dumpDatabase(t, db), t.Name())
	})

	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r"})
	require.NoError(t, err)
	require.NotEqual(t, len(before), len(dumpDatabase(t, db)))
}

// A run the reference stored with run_attempt 0 (its GCS backfill's,
// when it could not read the run from GitHub) is adopted as attempt 1,
// the ledger knowing it so; one whose run also has an attempt 1 refuses
// the adopt.
func TestAdoptUnknownAttempt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, refdb.Create(ctx, conn, refdb.Level010))
	o := refdb.SmallOptions(7)
	o.UnknownAttemptEvery = 3
	_, err = refdb.Fill(ctx, conn, o)
	require.NoError(t, err)
	var zero int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM workflow_runs WHERE run_attempt = 0`).Scan(&zero))
	require.Positive(t, zero)

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Empty(t, plan.Refusals)
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "SemiAnalysisAI/InferenceX", ToolVersion: "test"})
	require.NoError(t, err)
	var ones, ledger int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE w.run_attempt = 1),
			count(*) FILTER (WHERE g.run_attempt = 1 AND g.target = 'adopted')
		FROM reference_archive.workflow_runs r JOIN public.workflow_runs w ON w.id = r.id
		JOIN public.ingests g ON g.workflow_run_id = w.id WHERE r.run_attempt = 0`).Scan(&ones, &ledger))
	require.Equal(t, zero, ones)
	require.Equal(t, zero, ledger)

	ref, _ := refDatabase(t, refdb.Level010)
	c2, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer c2.Close(ctx)
	_, err = c2.Exec(ctx, `INSERT INTO workflow_runs (github_run_id, run_attempt, name, created_at, date)
		SELECT github_run_id, 0, name, created_at, date FROM workflow_runs WHERE run_attempt = 1 ORDER BY id LIMIT 1`)
	require.NoError(t, err)
	s2, err := store.Open(ctx, ref, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer s2.Close()
	plan, err = s2.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Len(t, plan.Refusals, 1, "%+v", plan.Refusals)
}
