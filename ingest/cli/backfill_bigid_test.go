package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestBackfillIngestIDAboveInt32: ingests.id is a bigserial: an outcome is recorded with a ledger
// id past 2^31-1 (the settle statement types it bigint).
func TestBackfillIngestIDAboveInt32(t *testing.T) {
	db := pgtest.New(t)
	require.NoError(t, queryRow(t, db, `SELECT setval('ingests_id_seq', 3000000000) > 0`, new(bool)))
	trees := t.TempDir()
	_, err := generate.Write(filepath.Join(trees, "a"), generate.Options{Points: 3, Seed: 1, RunID: 28400000041})
	require.NoError(t, err)
	r := run(t, map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"},
		"backfill", "--from-dir", trees)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []int64{3000000001}, queryInt64s(t, db, `SELECT ingest_id FROM backfill_runs WHERE state = 'ingested'`))
}
