package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestPreviewOverlayRows: `ingest preview` of the demo tree prints the
// overlay's {runInfo, benchmarks, evaluations} with exactly the site's
// field names, the rows this ingest's normalizer makes of results_bmk and
// eval_results_all (the failed-run row skipped, the a100-lab row unmapped,
// as the report counts them); each benchmark row is a point `ingest load`
// stores with the same throughput; the same run fetched by id from fake
// GitHub previews identically; no database is touched.
func TestPreviewOverlayRows(t *testing.T) {
	t.Parallel()
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, "preview", demo)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stderr, "9 benchmark rows, 3 eval rows; 1 benchmark rows skipped: failed_run; 1 benchmark rows unmapped")

	var shape struct {
		RunInfo     map[string]any   `json:"runInfo"`
		Benchmarks  []map[string]any `json:"benchmarks"`
		Evaluations []map[string]any `json:"evaluations"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shape))
	require.Equal(t, []string{"branch", "conclusion", "createdAt", "id", "isNonMainBranch", "name", "sha", "status", "url"}, keys(shape.RunInfo))
	require.Equal(t, float64(demoRunID), shape.RunInfo["id"])
	require.Equal(t, false, shape.RunInfo["isNonMainBranch"])
	require.Len(t, shape.Benchmarks, 9)
	require.Len(t, shape.Evaluations, 3)
	require.Equal(t, []string{"conc", "date", "decode_dp_attention", "decode_ep", "decode_num_workers", "decode_tp", "disagg",
		"framework", "hardware", "image", "is_multinode", "isl", "metrics", "model", "num_decode_gpu", "num_prefill_gpu", "osl",
		"precision", "prefill_dp_attention", "prefill_ep", "prefill_num_workers", "prefill_tp", "run_url", "spec_method"}, keys(shape.Benchmarks[0]))
	require.Nil(t, shape.Benchmarks[0]["run_url"])
	require.Equal(t, []string{"conc", "config_id", "date", "decode_dp_attention", "decode_ep", "decode_tp", "framework", "hardware",
		"metrics", "model", "precision", "run_url", "spec_method", "task", "timestamp"}, keys(shape.Evaluations[0]))

	// The database holds each previewed point, with the same throughput
	// where the aggregate has the point once (it also lists the stale
	// attempt of the conc-64 retry, which the overlay shows as the site
	// does and the ingest skips).
	db := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", demo, "--database-url", db))
	seen := map[string]int{}
	for _, b := range shape.Benchmarks {
		seen[pointOf(b)]++
	}
	compared := 0
	for _, b := range shape.Benchmarks {
		tput, ok := b["metrics"].(map[string]any)["tput_per_gpu"].(float64)
		require.True(t, ok, "%v", b)
		q := `SELECT count(*) FROM benchmark_results br JOIN configs c ON c.id = br.config_id
			WHERE c.hardware = $1 AND c.model = $2 AND c.framework = $3 AND br.conc = $4`
		args := []any{b["hardware"], b["model"], b["framework"], int(b["conc"].(float64))}
		if seen[pointOf(b)] == 1 {
			q += ` AND (br.metrics->>'tput_per_gpu')::float8 = $5`
			args = append(args, tput)
			compared++
		}
		require.Equal(t, []int64{1}, queryInt64s(t, db, q, args...), "previewed point not stored as previewed: %v", b)
	}
	require.Equal(t, 7, compared)

	// By run id, through fake GitHub: the same rows.
	fake, _ := demoFake(t)
	vars := runVars(fake, unreachableURL, t.TempDir())
	byID := run(t, vars, "preview", "--run-id", "28485856738")
	requireCode(t, cli.ExitOK, byID)
	require.JSONEq(t, r.stdout, byID.stdout)

	requireCode(t, cli.ExitUsage, run(t, nil, "preview"))
	requireCode(t, cli.ExitUsage, run(t, vars, "preview", demo, "--run-id", "1"))
}

// pointOf names a previewed benchmark point.
func pointOf(b map[string]any) string {
	return fmt.Sprint(b["hardware"], b["model"], b["framework"], b["precision"], b["isl"], b["osl"], b["conc"])
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPreviewWithoutAggregateFile: a tree whose aggregate artifacts hold no
// aggregate file is not previewed as an empty run. With neither file the
// preview exits 1 (as for a tree with neither artifact) naming each file it
// expected; with one of them it prints that one's rows and says on stderr
// which file it did not find.
func TestPreviewWithoutAggregateFile(t *testing.T) {
	t.Parallel()
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	for _, tc := range []struct {
		name   string
		files  map[string]string // relative path → content; "" a directory
		code   int
		stderr []string
		evals  int
	}{
		{"empty results_bmk", map[string]string{"results_bmk": ""}, cli.ExitAborted, []string{
			"no aggregate file to preview: results_bmk holds no .json file (agg_bmk.json expected); no eval_results_all artifact (agg_eval_all.json expected)"}, 0},
		{"results_bmk without json, evals read", map[string]string{"results_bmk/README.txt": "x", "eval_results_all/agg_eval_all.json": "copy"}, cli.ExitOK, []string{
			"ingest preview: 0 benchmark rows, 3 eval rows",
			"ingest preview: no benchmark rows: results_bmk holds no .json file (agg_bmk.json expected)"}, 3},
		{"both artifacts empty", map[string]string{"results_bmk": "", "eval_results_all": ""}, cli.ExitAborted, []string{
			"no aggregate file to preview: results_bmk holds no .json file (agg_bmk.json expected); eval_results_all holds no .json file (agg_eval_all.json expected)"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for p, content := range tc.files {
				full := filepath.Join(dir, p)
				if content == "" {
					require.NoError(t, os.MkdirAll(full, 0o755))
					continue
				}
				require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
				data := []byte(content)
				if content == "copy" {
					var err error
					data, err = os.ReadFile(filepath.Join(demo, p))
					require.NoError(t, err)
				}
				require.NoError(t, os.WriteFile(full, data, 0o644))
			}
			r := run(t, map[string]string{"DATABASE_URL": unreachableURL}, "preview", dir)
			requireCode(t, tc.code, r)
			for _, s := range tc.stderr {
				require.Contains(t, r.stderr, s)
			}
			if tc.code != cli.ExitOK {
				require.Empty(t, r.stdout)
				return
			}
			var out struct{ Evaluations []any }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
			require.Len(t, out.Evaluations, tc.evals)
		})
	}
}
