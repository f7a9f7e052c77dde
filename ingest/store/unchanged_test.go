package store_test

import (
	"context"
	"encoding/json"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestPriorIngestSeesWritesDuringTheRun: the data an ingest's outcome
// depends on is the data as its transaction began, so a write committed
// while it ran (here: by hand, between its begin and its commit) counts as
// a change since; an ingest with no such write is unchanged, and another
// run's ingest afterwards does not change that.
func TestPriorIngestSeesWritesDuringTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	_, _, err := st.MigrateUp(ctx)
	require.NoError(t, err)

	ingest := func(runID int64, during func()) {
		t.Helper()
		tx, err := st.BeginRun(ctx, start(runID))
		require.NoError(t, err)
		win := benchmarks.NewWinners()
		_, err = tx.StageBenchmarks(ctx, iterate[schema.StagedBenchmark](nil), win.Add)
		require.NoError(t, err)
		_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
		require.NoError(t, err)
		if during != nil {
			during()
		}
		tx.SetInputDigest([]byte("digest"), nil)
		sum := &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}
		require.NoError(t, tx.Finish(ctx, sum, json.RawMessage(`[]`), false))
	}
	prior := func(runID int64) schema.PriorIngest {
		t.Helper()
		p, err := st.PriorIngest(ctx, start(runID).Run)
		require.NoError(t, err)
		require.NotZero(t, p.IngestID)
		require.Equal(t, []byte("digest"), p.InputDigest)
		return p
	}

	ingest(42, nil)
	require.True(t, prior(42).DataUnchanged, "nothing was written since")

	ingest(43, nil) // another run's ingest
	require.True(t, prior(42).DataUnchanged, "another run's ingest counted as a change")

	ingest(42, func() {
		_, err := st.Pool().Exec(ctx, `UPDATE workflow_runs SET name = name WHERE github_run_id = 43`)
		require.NoError(t, err)
	})
	require.False(t, prior(42).DataUnchanged, "a write committed while the ingest ran went unnoticed")
}

// TestRerunFileIndexIsNotStoredTwice: a rerun answered from the ledger
// whose file index is the one its prior ingest resolves to stores none,
// and the next rerun still gets it, through the unchanged_since chain; an
// index that differs (files indexed since) is stored and then resolves.
func TestRerunFileIndexIsNotStoredTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	_, _, err := st.MigrateUp(ctx)
	require.NoError(t, err)
	tx, err := st.BeginRun(ctx, start(42))
	require.NoError(t, err)
	win := benchmarks.NewWinners()
	_, err = tx.StageBenchmarks(ctx, iterate[schema.StagedBenchmark](nil), win.Add)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
	require.NoError(t, err)
	tx.SetInputDigest([]byte("digest"), []byte("index-1"))
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))

	rerun := func(files []byte) (int64, schema.PriorIngest) {
		t.Helper()
		p, err := st.PriorIngest(ctx, start(42).Run)
		require.NoError(t, err)
		sum := &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}
		ok, err := st.RecordUnchanged(ctx, start(42), p, []byte("digest"), files, sum, false, nil)
		require.NoError(t, err)
		require.True(t, ok)
		return sum.IngestID, p
	}
	stored := func(id int64) []byte {
		t.Helper()
		var b []byte
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT input_files FROM ingests WHERE id = $1`, id).Scan(&b))
		return b
	}

	first, p := rerun([]byte("index-1"))
	require.Equal(t, []byte("index-1"), p.InputFiles)
	require.Nil(t, stored(first), "the same index stored again")
	second, p := rerun([]byte("index-1"))
	require.Equal(t, []byte("index-1"), p.InputFiles, "the rerun's index, through its chain")
	require.Nil(t, stored(second))
	third, p := rerun([]byte("index-2"))
	require.Equal(t, []byte("index-1"), p.InputFiles, "two reruns up the chain")
	require.Equal(t, []byte("index-2"), stored(third), "a changed index is stored")
	_, p = rerun([]byte("index-2"))
	require.Equal(t, []byte("index-2"), p.InputFiles)
}

// TestStoredSummaryOfUnknownVersion: a ledger summary of a schemaVersion
// this build does not read (written by a newer build, or of no known
// layout) is not taken at its word by the readers of the ledger, as
// `ingest report` does not render it: the rerun path finds no summary to
// answer from (the rerun reads the run in full), and verify's read-back
// refuses, saying why. A summary of this build's version reads as before.
func TestStoredSummaryOfUnknownVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	_, _, err := st.MigrateUp(ctx)
	require.NoError(t, err)
	for _, tc := range []struct {
		run     int64
		version int
		why     string
	}{
		{42, schema.SummarySchemaVersion, ""},
		{43, schema.SummarySchemaVersion + 1, "summary written by a newer build (schemaVersion 2): upgrade ingest to read it"},
		{44, 0, "summary of an unknown layout (schemaVersion 0, this build reads 1): it cannot be read"},
	} {
		tx, err := st.BeginRun(ctx, start(tc.run))
		require.NoError(t, err)
		win := benchmarks.NewWinners()
		_, err = tx.StageBenchmarks(ctx, iterate[schema.StagedBenchmark](nil), win.Add)
		require.NoError(t, err)
		_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
		require.NoError(t, err)
		tx.SetInputDigest([]byte("digest"), nil)
		sum := &schema.Summary{SchemaVersion: tc.version, Status: schema.StatusSucceeded, FinishedAt: time.Now()}
		require.NoError(t, tx.Finish(ctx, sum, json.RawMessage(`[]`), false))

		p, err := st.PriorIngest(ctx, start(tc.run).Run)
		require.NoError(t, err)
		require.NotZero(t, p.IngestID, "run %d", tc.run)
		rb, err := st.ReadBackRun(ctx, "o/r", tc.run, nil) // the run has no benchmark rows to re-encode
		if tc.why == "" {
			require.NotNil(t, p.Summary, "run %d", tc.run)
			require.NoError(t, err)
			require.Len(t, rb.Ingests, 1)
			continue
		}
		require.Nil(t, p.Summary, "run %d: a rerun answered from a summary this build cannot read", tc.run)
		require.ErrorIs(t, err, schema.ErrUnreadableSummary, "run %d", tc.run)
		require.ErrorContains(t, err, tc.why)
	}
}
