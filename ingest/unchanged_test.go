package ingest_test

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestUnchangedRerun: a rerun is answered from the ledger exactly when its
// inputs (tree, build, catalog and override files, options) are those of
// the run's newest finished ingest and no transaction has written data
// since; in every other case it reads the run in full.
func TestUnchangedRerun(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	dir := t.TempDir()
	hGenTree(t, dir)
	load := func(t *testing.T, extra ...string) (hResult, *schema.Summary) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "summary.json")
		r := hCLI(t.Context(), nil, append([]string{"load", dir, "--database-url", db, "--summary-json", path, "--log-level", "warn"}, extra...)...)
		require.Contains(t, []int{cli.ExitOK, cli.ExitCompletedWithFailures}, r.code, "%s", r)
		s := hSummary(t, path)
		require.NotNil(t, s, "%s", r)
		return r, s
	}
	tables := func(t *testing.T) map[string]string {
		c := hChecksums(t, db)
		delete(c, "data_changes")
		return c
	}
	ledgerRows := func(t *testing.T) int64 { return hQueryInt(t, db, `SELECT count(*) FROM ingests`) }
	requireAllDuplicate := func(t *testing.T, s, first *schema.Summary) {
		t.Helper()
		require.Equal(t, schema.Counts{Duplicate: first.Rows.Benchmark.New + first.Rows.Benchmark.Duplicate,
			Skipped: first.Rows.Benchmark.Skipped, Unmapped: first.Rows.Benchmark.Unmapped, Failed: first.Rows.Benchmark.Failed}, s.Rows.Benchmark)
		require.Zero(t, s.Rows.Eval.New+s.Rows.Trace.New+s.Rows.Power.New+s.Stats.EvalSamplesNew+s.Stats.GPUMetricSamplesNew)
	}

	_, first := load(t)
	require.Zero(t, first.Details.UnchangedSince)
	require.Positive(t, first.Rows.Benchmark.New)
	require.Positive(t, first.Rows.Eval.New)
	require.Positive(t, first.Rows.Power.New)
	written := tables(t)

	r, s := load(t)
	require.Equal(t, first.IngestID, s.Details.UnchangedSince, "the rerun was not answered from the ledger")
	require.Contains(t, r.stdout, "inputs unchanged since ingest")
	requireAllDuplicate(t, s, first)
	require.Equal(t, first.Stats.EvalSamplesNew, s.Details.EvalSamplesDuplicate)
	require.Equal(t, written, tables(t), "an answered rerun changed the data")
	require.EqualValues(t, 2, ledgerRows(t))
	require.EqualValues(t, 1, hQueryInt(t, db, `SELECT count(*) FROM ingests a JOIN ingests b ON b.id = $2
		WHERE a.id = $1 AND a.artifacts::text = b.artifacts::text AND b.unchanged_since = a.id AND b.status = a.status
		AND b.input_digest = a.input_digest AND (b.summary->>'ingestId')::bigint = b.id`, first.IngestID, s.IngestID),
		"the answered rerun's ledger row does not carry the first ingest's artifact records and digest")
	// Nothing written, nothing pending: the view update is skipped, in the
	// report and in the ledger row, which is written once, with it.
	require.Equal(t, schema.RefreshSkipped, s.Details.LatestBenchmarks.Status)
	require.EqualValues(t, 1, hQueryInt(t, db, `SELECT count(*) FROM ingests WHERE id = $1
		AND summary->'details'->'latestBenchmarks'->>'status' = 'skipped'`, s.IngestID))
	reportOut := hCLI(t.Context(), nil, "report", "--run-id", hItoa(generate.DefaultRunID), "--database-url", db)
	require.Equal(t, cli.ExitOK, reportOut.code, "%s", reportOut)
	require.Contains(t, reportOut.stdout, "inputs unchanged since ingest")

	t.Run("dry run answered, nothing recorded", func(t *testing.T) {
		_, d := load(t, "--dry-run")
		require.Equal(t, s.IngestID, d.Details.UnchangedSince)
		require.True(t, d.DryRun)
		require.Zero(t, d.IngestID)
		require.EqualValues(t, 2, ledgerRows(t))
	})

	t.Run("reread reads in full, and is answered from next", func(t *testing.T) {
		_, full := load(t, "--reread")
		require.Zero(t, full.Details.UnchangedSince)
		requireAllDuplicate(t, full, first)
		_, next := load(t)
		require.Equal(t, full.IngestID, next.Details.UnchangedSince)
	})

	t.Run("data written by hand since: read in full, restored", func(t *testing.T) {
		hExec(t, db, `DELETE FROM changelog_entries`)
		_, full := load(t)
		require.Zero(t, full.Details.UnchangedSince)
		require.Positive(t, full.Stats.ChangelogEntriesWritten, "the deleted changelog entry was not written again")
		now := tables(t)
		require.Equal(t, written["changelog_entries"][:2], now["changelog_entries"][:2], "changelog entries (a new id)")
		delete(now, "changelog_entries")
		want := maps.Clone(written)
		delete(want, "changelog_entries")
		require.Equal(t, want, now)
		_, next := load(t)
		require.Equal(t, full.IngestID, next.Details.UnchangedSince)
	})

	t.Run("another run ingested since: still answered, and equal to a full read", func(t *testing.T) {
		// Run 777 shares configs, texts and availability dates with this
		// one: it inserts only its own rows and ones this run finds stored.
		other := t.TempDir()
		_, err := generate.Write(other, generate.Options{Points: 3, Seed: 1, Telemetry: true, Evals: 1, EvalDocs: 4, AgentX: 1, RunID: 777})
		require.NoError(t, err)
		o := hCLI(t.Context(), nil, "load", other, "--database-url", db, "--log-level", "warn")
		require.Equal(t, cli.ExitOK, o.code, "%s", o)
		_, answered := load(t)
		require.NotZero(t, answered.Details.UnchangedSince)
		_, full := load(t, "--reread")
		require.JSONEq(t, comparableSummary(t, full), comparableSummary(t, answered))
		requireAllDuplicate(t, full, first)
	})

	t.Run("another attempt of the run ingested since: read in full", func(t *testing.T) {
		attempt := t.TempDir()
		_, err := generate.Write(attempt, generate.Options{Points: 2, Seed: 7})
		require.NoError(t, err)
		o := hCLI(t.Context(), nil, "load", attempt, "--database-url", db, "--log-level", "warn", "--attempt", "2")
		require.Equal(t, cli.ExitOK, o.code, "%s", o)
		_, full := load(t)
		require.Zero(t, full.Details.UnchangedSince)
		requireAllDuplicate(t, full, first)
	})

	t.Run("options or catalog differ: read in full", func(t *testing.T) {
		_, named := load(t, "--target", "staging")
		require.Zero(t, named.Details.UnchangedSince, "another --target was answered from the ledger")
		ext := filepath.Join(t.TempDir(), "catalog.json")
		require.NoError(t, os.WriteFile(ext, []byte(`{}`), 0o644))
		_, withExt := load(t, "--target", "staging", "--catalog", ext)
		require.Zero(t, withExt.Details.UnchangedSince, "another catalog was answered from the ledger")
		_, again := load(t, "--target", "staging", "--catalog", ext)
		require.Equal(t, withExt.IngestID, again.Details.UnchangedSince)
	})

	t.Run("tree changed: read in full", func(t *testing.T) {
		_, path := hFixedSeqArtifact(t, dir)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644)) // same rows, other bytes
		_, full := load(t)
		require.Zero(t, full.Details.UnchangedSince)
		requireAllDuplicate(t, full, first)
	})

	t.Run("prior superseded between the check and the record: nothing recorded", func(t *testing.T) {
		st, err := store.Open(t.Context(), db, zap.NewNop())
		require.NoError(t, err)
		defer st.Close()
		run := schema.RunIdentity{Repo: "SemiAnalysisAI/InferenceX", SourceRunID: generate.DefaultRunID, SourceRunAttempt: 1}
		p, err := st.PriorIngest(t.Context(), run)
		require.NoError(t, err)
		require.True(t, p.DataUnchanged)
		require.NotEmpty(t, p.InputDigest)
		hExec(t, db, `UPDATE workflow_runs SET name = name`) // a write by someone else
		p2, err := st.PriorIngest(t.Context(), run)
		require.NoError(t, err)
		require.False(t, p2.DataUnchanged, "a write since the ingest went unnoticed")
		rows := ledgerRows(t)
		ok, err := st.RecordUnchanged(t.Context(), schema.RunStart{Run: run, Target: "x"}, p, p.InputDigest, nil,
			&schema.Summary{Status: schema.StatusSucceeded}, false, nil)
		require.NoError(t, err)
		require.False(t, ok, "recorded an answer from an ingest whose data changed since")
		require.Equal(t, rows, ledgerRows(t))
	})
}
