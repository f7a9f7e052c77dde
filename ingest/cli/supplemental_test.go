package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

const (
	supplementalEvals = "../../fixtures/supplemental/supplemental-evals.json"
	supplementalBmk   = "../../fixtures/supplemental/supplemental-bmk.json"
	supplementalRunID = 1
)

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestSupplementalRealFiles: the reference's supplemental files load with
// exact counts (66 eval rows: 48 distinct natural keys, 18 rows describing
// a key a second time; the benchmarks file is the empty array of the
// reference's master), a dry run writes nothing, a rerun is all
// duplicate, and the rows stay traceable to the files and their sha256.
func TestSupplementalRealFiles(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	args := []string{"supplemental", supplementalEvals, supplementalBmk}

	dry := loadSummary(t, vars, cli.ExitOK, append(args, "--dry-run")...)
	require.Equal(t, schema.Counts{New: 48, Duplicate: 18}, dry.Rows.Eval)
	require.Zero(t, count(t, db, "eval_results"))
	require.Zero(t, count(t, db, "ingests"))

	s := loadSummary(t, vars, cli.ExitOK, args...)
	require.Equal(t, schema.StatusSucceeded, s.Status)
	require.Equal(t, schema.Counts{New: 48, Duplicate: 18}, s.Rows.Eval)
	require.Equal(t, schema.Counts{}, s.Rows.Benchmark)
	require.Empty(t, s.Details.NoBenchmarkData)
	require.True(t, s.Unmapped.Empty(), "%+v", s.Unmapped)
	require.Equal(t, int64(66), s.Details.EvalRows)
	require.Equal(t, int64(48), count(t, db, "eval_results"))

	// Every row belongs to the synthetic run, dated by the newest row
	// timestamp, and was read from the named file.
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var repo, name, date string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT repo, name, date::text FROM workflow_runs WHERE github_run_id = $1`,
		supplementalRunID).Scan(&repo, &name, &date))
	require.Equal(t, []string{"supplemental", "Supplemental data", "2026-01-21"}, []string{repo, name, date})
	// Each row is read from a one-row file naming its row of the original
	// file; the 48 stored rows are 48 distinct rows of it.
	rows, err := conn.Query(t.Context(), `SELECT source_artifact || '/' || source_file FROM eval_results`)
	require.NoError(t, err)
	files, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	re := regexp.MustCompile(`^eval_results_supplemental-evals/\d+-supplemental-evals-row(\d+)\.json$`)
	seenRows := map[string]bool{}
	for _, f := range files {
		m := re.FindStringSubmatch(f)
		require.NotNil(t, m, f)
		seenRows[m[1]] = true
	}
	require.Len(t, seenRows, 48)
	// A key the file describes twice keeps its newest description, as the
	// reference's upsert in file order does: row 25 (February results)
	// over row 0 (January), both dsr1 fp4 sglang TP4 EP4 on B200 at conc 128.
	var strict float64
	var src string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT (e.metrics->>'em_strict')::float8, e.source_file FROM eval_results e
		JOIN configs c ON c.id = e.config_id
		WHERE c.hardware = 'b200' AND c.framework = 'sglang' AND c.precision = 'fp4' AND c.decode_tp = 4 AND e.conc = 128`).Scan(&strict, &src))
	require.Equal(t, 0.9446550416982562, strict)
	require.Contains(t, src, "-row25.json")
	var isl, osl, tasks int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT min(isl), max(osl), count(DISTINCT task) FROM eval_results`).Scan(&isl, &osl, &tasks))
	require.Equal(t, []int{1024, 8192, 1}, []int{isl, osl, tasks}, "1k8k from the source paths, gsm8k only")
	var desc string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT description FROM changelog_entries`).Scan(&desc))
	require.Contains(t, desc, "supplemental-evals.json (evals, 66 rows, sha256 "+fileSHA256(t, supplementalEvals)+")")
	require.Contains(t, desc, "supplemental-bmk.json (benchmarks, 0 rows, sha256 "+fileSHA256(t, supplementalBmk)+")")

	// The order the files are given in does not matter; all duplicate.
	again := loadSummary(t, vars, cli.ExitOK, "supplemental", supplementalBmk, supplementalEvals)
	require.Equal(t, schema.Counts{Duplicate: 66}, again.Rows.Eval)
	require.Zero(t, again.Details.EvalRowsUpdated)
	// The files hold eval rows and no benchmark row: the run is evals-only
	// by design (not "no benchmark data"), and the report says so.
	// The same files again: answered from the ledger, which the last note says.
	require.NotZero(t, again.Details.UnchangedSince)
	require.Len(t, again.Notes, 2)
	require.Equal(t, "evals-only run (a changelog entry has evals-only: true): benchmark and run-stats stages skipped", again.Notes[0])
	require.Contains(t, again.Notes[1], "inputs unchanged since ingest")
	require.Equal(t, schema.RefreshSkipped, again.Details.LatestBenchmarks.Status)
	require.Equal(t, int64(48), count(t, db, "eval_results"))
	require.Equal(t, int64(1), count(t, db, "changelog_entries"))
}

// TestSupplementalBenchmarks: benchmark rows with a nested metrics object
// are normalized like artifact rows (aliases, topology), a GPU the catalog
// lacks is reported unmapped under its raw name and never mapped to
// another, the rows reach latest_benchmarks, and a rerun is all duplicate.
func TestSupplementalBenchmarks(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	sample := "testdata/supplemental-bmk-sample.json"

	s := loadSummary(t, vars, cli.ExitOK, "supplemental", sample)
	require.Equal(t, schema.Counts{New: 2, Unmapped: 1}, s.Rows.Benchmark)
	require.Equal(t, []string{"Trainium9"}, s.Unmapped.Hardware)
	require.Equal(t, schema.RefreshRefreshed, s.Details.LatestBenchmarks.Status)

	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT c.model || ' ' || c.hardware || ' ' || c.framework || ' tp' || c.decode_tp || ' conc' || lb.conc
			|| ' ' || lb.date::text || ' ' || (lb.metrics->>'tput_per_gpu')
		FROM latest_benchmarks lb JOIN configs c ON c.id = lb.config_id ORDER BY lb.conc`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"dsr1 h200 sglang tp8 conc4 2026-01-15 310.5", "dsr1 h200 sglang tp8 conc8 2026-01-15 560.25"}, got)
	var hw []string
	rows, err = conn.Query(t.Context(), `SELECT DISTINCT hardware FROM configs`)
	require.NoError(t, err)
	hw, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"h200"}, hw, "the unknown GPU is not mapped to another")

	again := loadSummary(t, vars, cli.ExitOK, "supplemental", sample)
	require.Equal(t, schema.Counts{Duplicate: 2, Unmapped: 1}, again.Rows.Benchmark)
	require.Equal(t, schema.RefreshSkipped, again.Details.LatestBenchmarks.Status)
}

// TestSupplementalUsage: what the command refuses before any connection.
func TestSupplementalUsage(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": unreachableURL}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"supplemental"}, "at least one file is required", cli.ExitUsage},
		{[]string{"supplemental", supplementalEvals, "--run-id", "5"}, "--run-id does not apply", cli.ExitUsage},
		{[]string{"supplemental", supplementalEvals, "--date", "21-01-2026"}, "is not YYYY-MM-DD", cli.ExitUsage},
		{[]string{"supplemental", "testdata/does-not-exist.json"}, "is not a file", cli.ExitUsage},
	} {
		r := run(t, vars, tc.args...)
		requireCode(t, tc.code, r)
		require.Contains(t, r.stderr, tc.want)
	}
}
