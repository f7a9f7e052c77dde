package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestUpdateMarksOnlyRunsWhoseRowsMovedOnACurve states the update trigger
// of benchmark_results (migration 000020): an update marks the runs of
// the rows whose placement on a curve changed (key, error, image, date),
// the old run and the new one, and nothing for rows whose metrics or
// links alone changed, however many rows the statement touched.
func TestUpdateMarksOnlyRunsWhoseRowsMovedOnACurve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	var rows []schema.StagedBenchmark
	for i := 1; i <= 40; i++ {
		rows = append(rows, schema.StagedBenchmark{Point: testPoint(i, float64(i)),
			Source: schema.Provenance{Artifact: "bmk_a", File: fmt.Sprintf("r%d.json", i)}})
	}
	ingestOnce(t, st, rows, nil)
	pool := st.Pool()
	var run int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM workflow_runs`).Scan(&run))
	var other int64
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO workflow_runs (repo, github_run_id, run_attempt, name, created_at, date)
		SELECT repo, github_run_id + 1, run_attempt, name, created_at, date FROM workflow_runs WHERE id = $1
		RETURNING id`, run).Scan(&other))

	for _, tc := range []struct {
		name   string
		update string
		want   []int64
	}{
		{"metrics of every row", `UPDATE benchmark_results SET metrics = metrics || '{"x": 1}'`, nil},
		{"nothing changes", `UPDATE benchmark_results SET conc = conc`, nil},
		{"one row's error", `UPDATE benchmark_results SET error = 'bad' WHERE conc = 3`, []int64{run}},
		{"one row's date", `UPDATE benchmark_results SET date = date + 1 WHERE conc = 5`, []int64{run}},
		{"one row's image, NULL to a value", `UPDATE benchmark_results SET image = 'img' WHERE conc = 7`, []int64{run}},
		{"one row moves to another run", `UPDATE benchmark_results SET workflow_run_id = $1 WHERE conc = 9`, []int64{run, other}},
		{"metrics of all, the key of one", `UPDATE benchmark_results SET metrics = metrics || '{"y": 2}',
			conc = CASE WHEN conc = 11 THEN 111 ELSE conc END`, []int64{run}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, `DELETE FROM materialized_view_marks`)
			require.NoError(t, err)
			var args []any
			if len(tc.want) == 2 {
				args = append(args, other)
			}
			_, err = tx.Exec(ctx, tc.update, args...)
			require.NoError(t, err)
			var got []int64
			r, err := tx.Query(ctx, `SELECT workflow_run_id FROM materialized_view_marks
				WHERE view_name = 'latest_benchmarks' AND cause = 'benchmark_results update' ORDER BY workflow_run_id`)
			require.NoError(t, err)
			for r.Next() {
				var id int64
				require.NoError(t, r.Scan(&id))
				got = append(got, id)
			}
			require.NoError(t, r.Err())
			require.Equal(t, tc.want, got)
		})
	}
}
