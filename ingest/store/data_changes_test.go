package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestEveryDataTableNotesChanges: a rerun trusts that no transaction wrote
// the data since an ingest only because every table holding data notes its
// writers in data_changes (migration 10). A table added later without the
// trigger would let a rerun answer from stale data: this lists every table
// of the schema that lacks it, bookkeeping and derived tables excepted.
func TestEveryDataTableNotesChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.New(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
		  AND c.relname NOT IN ('ingests', 'backfills', 'backfill_runs', 'ingest_schema_migrations',
		                        'materialized_view_marks', 'materialized_view_state', 'data_changes',
		                        -- the ledger of overrides apply (migration 19), not data
		                        'override_applications',
		                        -- derived from benchmark_results, configs and workflow_runs (migration 13),
		                        -- whose writes are noted
		                        'benchmark_curves', 'benchmark_curve_lines', 'latest_benchmark_points')
		  AND NOT EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
		                  WHERE g.tgrelid = c.oid AND p.proname = 'note_data_change'
		                    -- tgtype: neither row-level (1) nor BEFORE (2), and on INSERT (4),
		                    -- DELETE (8), UPDATE (16) and TRUNCATE (32)
		                    AND g.tgtype & 3 = 0 AND g.tgtype & 60 = 60)
		ORDER BY 1`)
	require.NoError(t, err)
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, missing, "data tables whose writes a rerun would not notice")

	var tables int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
		WHERE p.proname = 'note_data_change'`).Scan(&tables))
	require.GreaterOrEqual(t, tables, 18)
}
