package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// copyTree copies the run tree at src into a fresh directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// TestPromotionComparesWithTheStagedIngest: a run staged into the staging
// database, then ingested into production from the same bytes (another
// copy of the tree), is a promotion with "same inputs as staged ingest #N";
// from a tree with one changed file and one artifact gone it lists both,
// by artifact, and under --require-staged it aborts with nothing written
// but its ledger row. Each report says whether it was staged or a
// promotion.
func TestPromotionComparesWithTheStagedIngest(t *testing.T) {
	t.Parallel()
	prod, staging := pgtest.New(t), pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo}
	const runID = "28400002821"
	staged, _ := genTree(t, generate.Options{Points: 3, Seed: 5, RunID: 28400002821})

	s := run(t, vars, "load", staged, "--target", "staging", "--format", "json")
	requireCode(t, cli.ExitOK, s)
	ss := parseSummary(t, s.stdout)
	require.Equal(t, schema.PublicationStaged, ss.Publication.Kind)
	require.True(t, strings.HasPrefix(ss.Publication.TreeDigest, "sha256:"), ss.Publication.TreeDigest)
	stagedID := ss.IngestID

	// The same bytes, downloaded again elsewhere.
	same := run(t, vars, "load", copyTree(t, staged), "--format", "json")
	requireCode(t, cli.ExitOK, same)
	ps := parseSummary(t, same.stdout)
	require.Equal(t, "production", ps.Target)
	require.Equal(t, &schema.Publication{Kind: schema.PublicationPromotion, TreeDigest: ss.Publication.TreeDigest,
		StagedTarget: "staging", StagedIngestID: stagedID, SameInputs: true}, ps.Publication)
	text := run(t, vars, "report", "--run-id", runID, "--format", "text")
	requireCode(t, cli.ExitOK, text)
	require.Contains(t, text.stdout, "promotion into the production database: same inputs as staged ingest #1 (staging)")
	md := run(t, vars, "report", "--run-id", runID, "--format", "md")
	require.Contains(t, md.stdout, "**promotion into the production database: same inputs as staged ingest #1 (staging)**")
	rows := count(t, prod, "benchmark_results")

	// Other bytes: one metric changed, the run-stats artifact gone.
	other := copyTree(t, staged)
	changeOneMetric(t, other)
	require.NoError(t, os.RemoveAll(filepath.Join(other, "run-stats")))
	changed := changedArtifact(t, staged, other)

	refused := run(t, vars, "load", other, "--require-staged")
	requireCode(t, cli.ExitAborted, refused)
	require.Contains(t, refused.stderr, "--require-staged: the inputs differ from staged ingest #1 (staging)")
	require.Regexp(t, `changed `+changed+` \(size \d+, staged \d+; file contents differ; file [^ ]+\.json changed\)`, refused.stderr)
	require.Contains(t, refused.stderr, "removed run-stats")
	require.Equal(t, rows, count(t, prod, "benchmark_results"))
	require.Equal(t, []string{"succeeded", "aborted"}, queryStrings(t, prod, "SELECT status FROM ingests ORDER BY id"))
	require.Equal(t, []int64{1}, queryInt64s(t, prod,
		"SELECT count(*) FROM ingests WHERE status = 'aborted' AND error LIKE '%inputs differ from staged ingest #1%'"))

	// Without --require-staged the differences are reported, and the run lands.
	diff := run(t, vars, "load", other, "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, diff) // run-stats is listed in artifacts.json: a failure
	dp := parseSummary(t, diff.stdout).Publication
	require.False(t, dp.SameInputs)
	require.Len(t, dp.Differences, 2)
	require.Equal(t, schema.ArtifactDifference{Artifact: "run-stats", Change: "removed"}, dp.Differences[1])
	require.Equal(t, changed, dp.Differences[0].Artifact)
	require.Equal(t, "changed", dp.Differences[0].Change)
	require.Regexp(t, `^size \d+, staged \d+; file contents differ; file [^ ]+\.json changed$`, dp.Differences[0].Detail)
	text = run(t, vars, "report", "--run-id", runID, "--format", "text")
	require.Regexp(t, `promotion into the production database: inputs differ from staged ingest #1 \(staging\): 1 removed, 1 changed\n`+
		`  changed `+changed+`: size \d+, staged \d+; file contents differ; file [^ ]+\.json changed\n  removed run-stats\n`, text.stdout)

	// A run never staged: compared with nothing, said so; refused under --require-staged.
	never, _ := genTree(t, generate.Options{Points: 2, Seed: 6, RunID: 28400002822})
	r := run(t, vars, "load", never, "--require-staged")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "--require-staged: run 28400002822 was never staged in staging")
	r = run(t, vars, "load", never, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, "run 28400002822 was never staged in staging", parseSummary(t, r.stdout).Publication.NotCompared)

	// No staging target configured: a plain production ingest, and
	// --require-staged is a usage error.
	plain := map[string]string{"DATABASE_URL": prod, "INGEST_REPO": runTestRepo}
	r = run(t, plain, "load", never, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	require.Nil(t, parseSummary(t, r.stdout).Publication)
	r = run(t, plain, "load", never, "--require-staged")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `--require-staged: the staged target: unknown target "staging"`)
}

// changedArtifact is the one artifact folder whose files differ between
// two trees.
func changedArtifact(t *testing.T, a, b string) string {
	t.Helper()
	var out []string
	dirs, err := filepath.Glob(filepath.Join(b, "bmk_*"))
	require.NoError(t, err)
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*.json"))
		require.NoError(t, err)
		for _, f := range files {
			x, err := os.ReadFile(f)
			require.NoError(t, err)
			y, err := os.ReadFile(filepath.Join(a, filepath.Base(d), filepath.Base(f)))
			require.NoError(t, err)
			if string(x) != string(y) {
				out = append(out, filepath.Base(d))
			}
		}
	}
	require.Len(t, out, 1)
	return out[0]
}

// TestPromotionWeakSpots: the same bytes of a tree without a listing,
// copied elsewhere (other modification times), are the same inputs; the
// same bytes under another run attempt are not (refused under
// --require-staged, naming both attempts); and a file changed inside an
// artifact, one the ingest does not read, is named with its artifact.
func TestPromotionWeakSpots(t *testing.T) {
	t.Parallel()
	prod, staging := pgtest.New(t), pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo,
		"INGEST_RUN_ID": "28400003821"}
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 7, RunID: 28400003821})
	require.NoError(t, os.Remove(filepath.Join(tree, "artifacts.json")))
	art := changedArtifact(t, tree, func() string { o := copyTree(t, tree); changeOneMetric(t, o); return o }())
	notes := filepath.Join(tree, art, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("aa"), 0o644))
	requireCode(t, cli.ExitOK, run(t, vars, "load", tree, "--target", "staging"))

	// Another attempt, same bytes: refused, naming both attempts.
	r := run(t, vars, "load", copyTree(t, tree), "--attempt", "2", "--require-staged")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "changed (run) (attempt 2, staged attempt 1)")

	// A file of the artifact that no stage reads, changed (same size).
	other := copyTree(t, tree)
	require.NoError(t, os.WriteFile(filepath.Join(other, art, "notes.txt"), []byte("bb"), 0o644))
	r = run(t, vars, "load", other, "--require-staged")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "changed "+art+" (file notes.txt changed)")
	require.NotContains(t, r.stderr, "outside the artifacts read")

	// The same bytes copied elsewhere, without a listing: the same inputs.
	copied := copyTree(t, tree)
	later := time.Now().Add(time.Hour)
	require.NoError(t, filepath.WalkDir(copied, func(p string, _ fs.DirEntry, err error) error {
		require.NoError(t, err)
		return os.Chtimes(p, later, later)
	}))
	same := run(t, vars, "load", copied, "--require-staged", "--format", "json")
	requireCode(t, cli.ExitOK, same)
	require.True(t, parseSummary(t, same.stdout).Publication.SameInputs)
}
