package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/source"
)

const (
	runTestRepo  = "SemiAnalysisAI/InferenceX"
	runTestToken = "ghs_RUNTESTTOKEN_never_in_output_91c2"
	demoHeadSHA  = "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a46"
	demoPR       = 2712 // the demo changelog's pr-link
)

// demoFake serves the demo run; the demo's head commit belongs to pull
// request demoPR, which already carries 120 unrelated comments (so the
// marker search needs two pages).
func demoFake(t *testing.T) (*fakegithub.Server, string) {
	if testing.Short() {
		t.Skip("end to end through the fake GitHub: not under -short")
	}
	t.Helper()
	fake := fakegithub.New(t, runTestRepo, runTestToken)
	dir := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(dir))
	_, err := fake.LoadTree(dir, 0)
	require.NoError(t, err)
	fake.SetPulls(demoHeadSHA, []fakegithub.PullRequest{{Number: demoPR, MergeCommitSHA: demoHeadSHA, Merged: true}})
	for i := range 120 {
		fake.AddComment(demoPR, "LGTM "+strconv.Itoa(i))
	}
	return fake, dir
}

// runVars is the environment of `ingest run` against fake.
func runVars(fake *fakegithub.Server, db, cache string) map[string]string {
	return map[string]string{
		"GITHUB_TOKEN":     runTestToken,
		"GITHUB_API_URL":   fake.BaseURL(),
		"INGEST_CACHE_DIR": cache,
		"DATABASE_URL":     db,
		"INGEST_REPO":      runTestRepo,
		"INGEST_TARGET":    "production",
	}
}

// reportComments are the comments of pr carrying an ingest-report marker.
func reportComments(fake *fakegithub.Server, pr int) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range fake.Comments(pr) {
		if strings.HasPrefix(c.Body, "<!-- ingest-report ") {
			out = append(out, c)
		}
	}
	return out
}

// dumpTables returns every row of the data tables as sorted JSON, without
// the surrogate ids and ingest references that differ between databases.
func dumpTables(t *testing.T, dbURL string) map[string][]string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	out := map[string][]string{}
	// Every data table: all of public but the ledger, the backfill queue
	// (who did what, and when), the view refresh bookkeeping (when it was
	// refreshed, how long it took), the change notes (which transactions
	// wrote) and golang-migrate's.
	rows, err := conn.Query(t.Context(), `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
		  AND table_name NOT IN ('ingests', 'backfills', 'backfill_runs', 'ingest_schema_migrations',
		                         'materialized_view_marks', 'materialized_view_state', 'data_changes')`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Greater(t, len(tables), 5)
	for _, table := range tables {
		// Columns stamped with the insertion time differ between two
		// ingests by nature; every other column must match.
		var volatile []string
		require.NoError(t, conn.QueryRow(t.Context(), `SELECT coalesce(array_agg(column_name::text), '{}') FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = $1 AND column_default ILIKE '%now()%'`, table).Scan(&volatile))
		rows, err := conn.Query(t.Context(), "SELECT (to_jsonb(t) - 'id' - 'ingest_id' - $1::text[])::text FROM "+pgx.Identifier{table}.Sanitize()+" t", volatile)
		require.NoError(t, err)
		list, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		slices.Sort(list)
		out[table] = list
	}
	return out
}

// requireNoSecret fails when the token shows in any text or any file
// under dirs.
func requireNoSecret(t *testing.T, texts []string, dirs ...string) {
	t.Helper()
	for _, s := range texts {
		require.NotContains(t, s, "RUNTESTTOKEN")
	}
	for _, d := range dirs {
		require.NoError(t, filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			require.NotContains(t, string(data), "RUNTESTTOKEN", "token in %s", p)
			return nil
		}))
	}
}

// jsonField reads one top-level field of a JSON document.
func jsonField(t *testing.T, doc, field string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(doc), &m))
	return m[field]
}

// demoArtifacts is the number of artifacts in the demo tree at dir.
func demoArtifacts(t *testing.T, dir string) int {
	t.Helper()
	tree, err := source.Open(t.Context(), dir, nil)
	require.NoError(t, err)
	defer tree.Close()
	return len(tree.Artifacts)
}

// dumpNatural is dumpTables with every reference to a surrogate id
// replaced by a digest of the row it points to (recursively), so that two
// databases whose rows were inserted in different orders compare equal
// when they hold the same content and the same links.
func dumpNatural(t *testing.T, dbURL string) map[string][]string {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	skip := map[string]bool{"ingests": true, "backfills": true, "backfill_runs": true, "ingest_schema_migrations": true,
		"materialized_view_marks": true, "materialized_view_state": true, "data_changes": true}
	// GPU-metric samples are compared as the view shows them, one row per
	// sample, not as the chunks that store them.
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'
		AND (table_type = 'BASE TABLE' AND table_name <> 'gpu_metric_sample_chunks' OR table_name = 'gpu_metric_samples')`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	// Single-column foreign keys: table → column → referenced table.
	fks := map[string]map[string]string{}
	rows, err = conn.Query(ctx, `SELECT c.conrelid::regclass::text, a.attname::text, c.confrelid::regclass::text
		FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'f' AND array_length(c.conkey, 1) = 1`)
	require.NoError(t, err)
	for rows.Next() {
		var tbl, col, ref string
		require.NoError(t, rows.Scan(&tbl, &col, &ref))
		if fks[tbl] == nil {
			fks[tbl] = map[string]string{}
		}
		fks[tbl][col] = ref
	}
	require.NoError(t, rows.Err())
	// References kept without a foreign key (samples are loaded by COPY and
	// carry none): they point at surrogate ids all the same.
	if fks["gpu_metric_samples"] == nil {
		fks["gpu_metric_samples"] = map[string]string{}
	}
	fks["gpu_metric_samples"]["series_id"] = "gpu_metric_series"
	// latest_benchmarks' tables (migrations 13, 21) are derived and carry none.
	fks["benchmark_curve_lines"] = map[string]string{"curve_id": "benchmark_curves", "workflow_run_id": "workflow_runs"}
	fks["latest_benchmark_points"] = map[string]string{"result_id": "benchmark_results", "curve_id": "benchmark_curves",
		"config_id": "configs", "snapshot_workflow_run_id": "workflow_runs", "workflow_run_id": "workflow_runs"}
	data := map[string][]map[string]any{}
	byID := map[string]map[string]map[string]any{}
	for _, table := range tables {
		if skip[table] {
			continue
		}
		var volatile []string
		require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(array_agg(column_name::text), '{}') FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = $1 AND column_default ILIKE '%now()%'`, table).Scan(&volatile))
		rows, err := conn.Query(ctx, "SELECT (to_jsonb(t) - $1::text[])::text FROM "+pgx.Identifier{table}.Sanitize()+" t", volatile)
		require.NoError(t, err)
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		byID[table] = map[string]map[string]any{}
		for _, text := range texts {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(text))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m))
			data[table] = append(data[table], m)
			if id, ok := m["id"]; ok {
				byID[table][fmt.Sprint(id)] = m
			}
		}
	}
	memo := map[string]string{}
	var canon func(table string, m map[string]any) string
	canon = func(table string, m map[string]any) string {
		out := map[string]any{}
		for k, v := range m {
			if k == "id" || k == "ingest_id" {
				continue
			}
			if ref, ok := fks[table][k]; ok && v != nil {
				if skip[ref] {
					continue
				}
				key := ref + "/" + fmt.Sprint(v)
				d, seen := memo[key]
				if !seen {
					target := byID[ref][fmt.Sprint(v)]
					require.NotNil(t, target, "%s.%s = %v points at no row of %s", table, k, v, ref)
					sum := sha256.Sum256([]byte(canon(ref, target)))
					d = hex.EncodeToString(sum[:8])
					memo[key] = d
				}
				out[k] = ref + ":" + d
				continue
			}
			out[k] = v
		}
		b, err := json.Marshal(out)
		require.NoError(t, err)
		return string(b)
	}
	result := map[string][]string{}
	for table, list := range data {
		for _, m := range list {
			result[table] = append(result[table], canon(table, m))
		}
		slices.Sort(result[table])
	}
	return result
}
