package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestRunEveryBenchmarkArtifactExpired: `ingest run` of a run whose
// benchmark artifacts have all expired on GitHub does not look like a
// success (issue 12). The rest of the run is written, the cached
// artifacts.json records every upload (the expired ones too), the report
// counts and names them, the headline says there is no benchmark data,
// and the command exits 3 — again on a rerun.
func TestRunEveryBenchmarkArtifactExpired(t *testing.T) {
	t.Parallel()
	fake, demoDir := demoFake(t)
	tree, err := source.Open(t.Context(), demoDir, nil)
	require.NoError(t, err)
	var expired []string
	for _, l := range tree.Listing {
		if strings.HasPrefix(l.Name, "bmk_") || strings.HasPrefix(l.Name, "results_") {
			expired = append(expired, l.Name)
			fake.SetExpired(28485856738, l.Name, true)
		}
	}
	listed := len(tree.Listing)
	slices.Sort(expired)
	require.NoError(t, tree.Close())
	require.Len(t, expired, 17, "fixtures/DEMO.md: 12 per-job, 4 AgentX, results_bmk")

	db := pgtest.New(t)
	cache := t.TempDir()
	const headline = "Ingest report — ⚠️ No benchmark data in this run: all 17 benchmark artifacts have expired. The rest was ingested into the production database."
	// fixtures/DEMO.md: eval new 3, duplicate 3, skipped 1; on a rerun
	// duplicate 6, skipped 1.
	for i, wantEvals := range []schema.Counts{{New: 3, Duplicate: 3, Skipped: 1}, {Duplicate: 6, Skipped: 1}} {
		r := run(t, runVars(fake, db, cache), "run", "--run-id", "28485856738", "--format", "json")
		requireCode(t, cli.ExitCompletedWithFailures, r)
		s := parseSummary(t, r.stdout)
		require.Equal(t, schema.StatusCompletedWithFailures, s.Status, "ingest %d", i+1)
		require.Equal(t, schema.Counts{}, s.Rows.Benchmark)
		require.Equal(t, wantEvals, s.Rows.Eval)
		require.EqualValues(t, 17, s.Details.ExpiredArtifacts)
		require.Zero(t, s.Details.MissingArtifacts)
		require.Equal(t, "all 17 benchmark artifacts have expired", s.Details.NoBenchmarkData)
		require.Contains(t, s.Notes, "17 listed artifacts have expired on GitHub and could not be read: "+strings.Join(expired, ", "))

		comments := reportComments(fake, demoPR)
		require.Len(t, comments, 1)
		require.Equal(t, headline, strings.Split(comments[0].Body, "\n")[1])
		require.NotContains(t, comments[0].Body, "✅")
	}
	require.Zero(t, count(t, db, "benchmark_results"))
	require.EqualValues(t, 3, count(t, db, "eval_results"))
	require.Equal(t, []int64{2}, queryInt64s(t, db, `SELECT count(*) FROM ingests WHERE status = 'completed_with_failures' AND github_run_id = 28485856738`))

	// The cached listing holds every upload of the run, expired ones too.
	trees, err := filepath.Glob(filepath.Join(cache, "SemiAnalysisAI", "InferenceX", "runs", "*"))
	require.NoError(t, err)
	require.Len(t, trees, 1)
	raw, err := os.ReadFile(filepath.Join(trees[0], source.ListingFile))
	require.NoError(t, err)
	var doc struct {
		Artifacts []struct {
			Name    string `json:"name"`
			Expired bool   `json:"expired"`
		} `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Artifacts, listed)
	var nExpired int
	for _, a := range doc.Artifacts {
		if a.Expired {
			nExpired++
		}
	}
	require.Equal(t, 17, nExpired)

	// ingest load of the cached tree says the same.
	loaded := pgtest.New(t)
	r := run(t, nil, "load", trees[0], "--database-url", loaded, "--target", "production")
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.True(t, strings.HasPrefix(r.stdout, headline+"\n"), "%s", r.stdout)
}
