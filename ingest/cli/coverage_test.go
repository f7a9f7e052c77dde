package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestCoverageGuard: a later run that publishes a narrower sweep of the
// same curves shrinks them. Under --coverage-guard refuse (here from the
// environment) it is rolled back with exit 4, its report lists the
// coverage loss and says how to acknowledge it, and nothing of it is
// written; --accept-coverage-loss naming those curves, or giving the loss
// token the report prints, lets it through;
// under warn (the default) it is written with ⚠️ in the headline. A dry
// run shows the same section.
func TestCoverageGuard(t *testing.T) {
	t.Parallel()
	wide, _ := genTree(t, generate.Options{Points: 24, Seed: 7, RunID: 900001})
	narrow, _ := genTree(t, generate.Options{Points: 6, Seed: 7, RunID: 900002})
	db := pgtest.New(t)
	first := run(t, nil, "load", wide, "--database-url", db, "--run-date", "2026-11-01", "--format", "json")
	requireCode(t, cli.ExitOK, first)
	require.Equal(t, schema.ImpactChanged, parseSummary(t, first.stdout).Impact.Status)
	rows := count(t, db, "benchmark_results")

	dry := run(t, nil, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "json", "--dry-run")
	requireCode(t, cli.ExitOK, dry)
	preview := parseSummary(t, dry.stdout).Impact
	require.NotNil(t, preview)
	require.Positive(t, preview.CoverageLossCurves, "the narrow sweep shrinks a published curve")
	require.Equal(t, schema.CoverageGuardWarn, preview.Guard)
	var keys []string
	for _, c := range preview.Curves {
		if len(c.CoverageLoss) > 0 {
			keys = append(keys, c.Key)
		}
	}

	dryMD := run(t, nil, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "md", "--dry-run")
	requireCode(t, cli.ExitOK, dryMD)
	require.Contains(t, dryMD.stdout, "> [!WARNING]\n> Ingest report — 🔎 Dry run — nothing was written. Coverage loss on ")
	require.Contains(t, dryMD.stdout, "\n**Action needed**\n")
	require.Contains(t, dryMD.stdout, "<details><summary>Dashboard impact: ")

	refuse := map[string]string{"INGEST_COVERAGE_GUARD": "refuse"}
	refused := run(t, refuse, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "md")
	requireCode(t, cli.ExitCoverageRefused, refused)
	token := impact.LossToken(keys)
	require.Contains(t, refused.stdout, "> [!CAUTION]\n> Ingest report — ❌ Ingest failed: the coverage guard refused the run")
	require.Contains(t, refused.stdout, "**Coverage loss** (coverage guard: refuse)")
	require.Contains(t, refused.stdout, "`--accept-coverage-loss "+token+"` (or `all`)")
	require.Contains(t, refused.stderr, "--accept-coverage-loss "+token+" (or all)")
	require.NotContains(t, refused.stdout, "--accept-coverage-loss "+keys[0], "the curves are not pasted into a flag")
	refusedJSON := run(t, refuse, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "json")
	requireCode(t, cli.ExitCoverageRefused, refusedJSON)
	refusedSum := parseSummary(t, refusedJSON.stdout)
	require.Equal(t, token, refusedSum.Impact.LossToken)
	require.Contains(t, refusedSum.AbortReason, "--accept-coverage-loss "+token+" (or all)", "the reason is whole")
	require.Positive(t, refusedSum.Rows.Benchmark.New+refusedSum.Rows.Benchmark.Duplicate,
		"a refused run reports what it would have written")
	require.Equal(t, rows, count(t, db, "benchmark_results"), "a refused run writes nothing")

	require.Contains(t, refused.stdout, "or with a `coverageLossAccepted` entry of the run overrides")

	// The token lets the run through (a dry run here), and so does the flag
	// naming the curves...
	byToken := run(t, refuse, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "json",
		"--dry-run", "--accept-coverage-loss", token)
	requireCode(t, cli.ExitOK, byToken)
	require.Equal(t, keys, parseSummary(t, byToken.stdout).Impact.Accepted)
	flagged := run(t, refuse, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "json",
		"--dry-run", "--accept-coverage-loss", strings.Join(keys, ","))
	requireCode(t, cli.ExitOK, flagged)
	require.Equal(t, keys, parseSummary(t, flagged.stdout).Impact.Accepted)
	// ... and so does an override entry naming them (written).
	ledger := filepath.Join(t.TempDir(), "overrides.json")
	entry, err := json.Marshal(map[string]any{"coverageLossAccepted": []map[string]any{
		{"runId": 900002, "curves": keys, "reason": "the narrow sweep replaces the curve on purpose"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ledger, entry, 0o644))
	accepted := run(t, refuse, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "json",
		"--overrides", ledger)
	requireCode(t, cli.ExitOK, accepted)
	imp := parseSummary(t, accepted.stdout).Impact
	require.Equal(t, keys, imp.Accepted)
	require.Equal(t, preview.PointsReplaced, imp.PointsReplaced, "the dry run previewed what the run did")
	require.Equal(t, preview.PointsDropped, imp.PointsDropped)

	// The same run again under warn, read in full: nothing changes.
	again := run(t, nil, "load", narrow, "--database-url", db, "--run-date", "2026-11-02", "--format", "text", "--reread")
	requireCode(t, cli.ExitOK, again)
	require.Contains(t, again.stdout, "\nDashboard impact: nothing changes.\n")
}

// TestCoverageGuardUsage: an unknown guard mode is a usage error.
func TestCoverageGuardUsage(t *testing.T) {
	t.Parallel()
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 1})
	r := run(t, nil, "load", dir, "--coverage-guard", "block")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `ingest load: invalid value "block" for --coverage-guard: want warn|refuse`)
}

// TestEvalEvidence: every eval task of a run is listed with its score,
// effective samples, threshold and decoding, and, once another run has
// stored scores of the same model and task, those as published scores
// (the other run's, never the run's own).
func TestEvalEvidence(t *testing.T) {
	t.Parallel()
	first, _ := genTree(t, generate.Options{Points: 2, Seed: 3, RunID: 910001, Evals: 2, EvalDocs: 5})
	second, _ := genTree(t, generate.Options{Points: 2, Seed: 3, RunID: 910002, Evals: 2, EvalDocs: 5})
	db := pgtest.New(t)
	r := run(t, nil, "load", first, "--database-url", db, "--run-date", "2026-11-01", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	ev := parseSummary(t, r.stdout).Impact.Evals
	require.Len(t, ev, 2)
	for _, e := range ev {
		require.NotNil(t, e.Score)
		require.Equal(t, 5, *e.EffectiveSamples)
		require.Equal(t, "greedy", e.Decoding)
		require.Empty(t, e.Published, "the run's own scores are not published ones")
	}
	r = run(t, nil, "load", second, "--database-url", db, "--run-date", "2026-11-02", "--format", "json", "--dry-run")
	requireCode(t, cli.ExitOK, r)
	ev = parseSummary(t, r.stdout).Impact.Evals
	require.Len(t, ev, 2)
	for _, e := range ev {
		require.NotEmpty(t, e.Published)
		for _, p := range e.Published {
			require.Equal(t, int64(910001), p.RunID)
			require.Equal(t, "2026-11-01", p.Date)
		}
	}
	r = run(t, nil, "load", second, "--database-url", db, "--run-date", "2026-11-02", "--format", "md", "--dry-run")
	require.Contains(t, r.stdout, "<details><summary>Eval evidence: 2 tasks")
	require.Contains(t, r.stdout, "| task | config | conc | effective samples | score | threshold | decoding |\n")
	require.Contains(t, r.stdout, "Published by other runs, one line per model and task:")
}
