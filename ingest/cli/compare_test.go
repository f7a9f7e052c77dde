package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/compare"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// compareOutput is the JSON of `ingest compare`.
type compareOutput struct {
	Schema      string               `json:"schema"`
	Level       string               `json:"level"`
	Rows        map[string][2]int    `json:"rows"`
	Differences []compare.Difference `json:"differences"`
	Unexplained int                  `json:"unexplained"`
	ByRule      map[string]int       `json:"byRule"`
}

func runCompare(t *testing.T, tree, db string) (int, compareOutput) {
	t.Helper()
	r := run(t, nil, "compare", tree, "--against", db, "--format", "json")
	var out compareOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.String())
	return r.code, out
}

// demoLoaded writes the demo run into a fresh database of ours with
// `ingest load`.
func demoLoaded(t *testing.T) (tree, db string) {
	t.Helper()
	tree = t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(tree))
	db = pgtest.New(t)
	r := run(t, nil, "load", tree, "--database-url", db, "--format", "json")
	requireCode(t, cli.ExitCompletedWithFailures, r) // the demo run has failures by design
	return tree, db
}

// TestCompareOurOwnLoad compares the demo run with the database its own
// load wrote: nothing differs.
func TestCompareOurOwnLoad(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	code, out := runCompare(t, tree, db)
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, compare.SchemaOurs, out.Schema)
	require.Empty(t, out.Differences)
	require.Equal(t, [2]int{12, 12}, out.Rows[compare.TableBenchmarks])
	for _, table := range []string{compare.TableEvalSamples, compare.TableTraces, compare.TableServerLogs} {
		n := out.Rows[table]
		require.Positive(t, n[0], table)
		require.Equal(t, n[0], n[1], table)
	}
}

// TestCompareFindsChanges changes one stored metric and deletes one eval
// sample: those two differences, unexplained, exit 1.
func TestCompareFindsChanges(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var before float64
	require.NoError(t, conn.QueryRow(ctx, `UPDATE benchmark_results b SET metrics = jsonb_set(metrics, '{tput_per_gpu}',
		to_jsonb((metrics->>'tput_per_gpu')::float8 * 2))
		WHERE id = (SELECT min(id) FROM benchmark_results WHERE benchmark_type = 'single_turn')
		RETURNING (metrics->>'tput_per_gpu')::float8 / 2`).Scan(&before))
	tag, err := conn.Exec(ctx, `DELETE FROM eval_samples WHERE id = (SELECT min(id) FROM eval_samples)`)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	code, out := runCompare(t, tree, db)
	require.Equal(t, cli.ExitDifferences, code)
	require.Len(t, out.Differences, 2, "%+v", out.Differences)
	require.Equal(t, 2, out.Unexplained)
	byTable := map[string]compare.Difference{}
	for _, d := range out.Differences {
		require.Equal(t, compare.Unexplained, d.Rule)
		byTable[d.Table] = d
	}
	m := byTable[compare.TableBenchmarks]
	require.Equal(t, compare.Different, m.Kind)
	require.Equal(t, "metrics.tput_per_gpu", m.Field)
	require.Equal(t, before, m.Ours)
	require.Equal(t, before*2, m.DB)
	require.NotNil(t, m.RelChange)
	require.InDelta(t, 1.0, *m.RelChange, 1e-9)
	require.Equal(t, compare.OnlyOurs, byTable[compare.TableEvalSamples].Kind)
}

// TestCompareReference compares the demo run with reference-shaped
// databases holding what the reference's ETL would have written for it:
// our own rows with the reference's documented differences applied
// (docs/reference-schema.md). Every difference is explained by a rule;
// then one unexplained change makes it exit 1.
func TestCompareReference(t *testing.T) {
	t.Parallel()
	tree, ours := demoLoaded(t)
	for _, level := range refdb.Levels() {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			ref := referenceOf(t, ours, level)
			code, out := runCompare(t, tree, ref)
			require.Equal(t, cli.ExitOK, code, "%+v %+v", out.ByRule, unexplained(out))
			require.Equal(t, compare.SchemaReference, out.Schema)
			require.Equal(t, level, out.Level)
			require.Zero(t, out.Unexplained)
			for _, rule := range []string{"changelog-one-row-per-entry", "agentx-server-metrics", "string-metrics-kept",
				"eval-samples-one-per-doc", "run-stats-per-gpu"} {
				require.Positive(t, out.ByRule[rule], rule)
			}

			conn, err := pgx.Connect(context.Background(), ref)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			_, err = conn.Exec(context.Background(), `UPDATE eval_results SET metrics = metrics || '{"score": 0.5}'
				WHERE id = (SELECT min(id) FROM eval_results)`)
			require.NoError(t, err)
			code, out = runCompare(t, tree, ref)
			require.Equal(t, cli.ExitDifferences, code)
			require.Equal(t, 1, out.Unexplained)
		})
	}
}

// TestCompareReadOnlyRole compares through a role that may only SELECT.
func TestCompareReadOnlyRole(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	role := "compare_ro_" + hex.EncodeToString(b)
	ident := pgx.Identifier{role}.Sanitize()
	for _, q := range []string{
		"CREATE ROLE " + ident + " LOGIN",
		"GRANT CONNECT ON DATABASE " + pgx.Identifier{dbName(t, db)}.Sanitize() + " TO " + ident,
		"GRANT USAGE ON SCHEMA public TO " + ident,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + ident,
	} {
		_, err := admin.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP OWNED BY "+ident)
		_, _ = c.Exec(context.Background(), "DROP ROLE "+ident)
	})
	u, err := url.Parse(db)
	require.NoError(t, err)
	u.User = url.User(role)
	code, out := runCompare(t, tree, u.String())
	require.Equal(t, cli.ExitOK, code)
	require.Empty(t, out.Differences)
	require.Equal(t, [2]int{12, 12}, out.Rows[compare.TableBenchmarks])
}

func TestCompareUsage(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no tree", []string{"compare", "--against", "postgres://x@127.0.0.1/none"}},
		{"tree not a directory", []string{"compare", tree + "/absent", "--against", "postgres://x@127.0.0.1/none"}},
		{"no --against", []string{"compare", tree}},
		{"bad --against", []string{"compare", tree, "--against", "postgres://%zz"}},
		{"bad --format", []string{"compare", tree, "--against", "postgres://x@127.0.0.1/none", "--format", "xml"}},
		{"bad --attempt", []string{"compare", tree, "--against", "postgres://x@127.0.0.1/none", "--attempt", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			requireCode(t, cli.ExitUsage, r)
			require.Empty(t, r.stdout)
		})
	}
}

func unexplained(out compareOutput) []compare.Difference {
	var u []compare.Difference
	for _, d := range out.Differences {
		if d.Rule == compare.Unexplained {
			u = append(u, d)
		}
	}
	return u
}

// TestCompareTracesAndLogs unlinks one row's trace and changes one stored
// log text: a trace only ours would link, and a log file whose text and
// size differ, both unexplained.
func TestCompareTracesAndLogs(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, q := range []string{
		`UPDATE benchmark_results SET trace_replay_id = NULL WHERE id = (SELECT min(id) FROM benchmark_results WHERE trace_replay_id IS NOT NULL)`,
		`UPDATE server_log_texts SET content = content || 'x' WHERE digest = (SELECT text_digest FROM server_log_files ORDER BY text_digest LIMIT 1)`,
	} {
		tag, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
		require.EqualValues(t, 1, tag.RowsAffected(), q)
	}
	code, out := runCompare(t, tree, db)
	require.Equal(t, cli.ExitDifferences, code)
	got := map[string]int{}
	for _, d := range out.Differences {
		require.Equal(t, compare.Unexplained, d.Rule)
		got[d.Table+" "+d.Kind+" "+d.Field]++
	}
	require.Equal(t, 1, got[compare.TableTraces+" "+compare.OnlyOurs+" "], "%+v", out.Differences)
	require.Positive(t, got[compare.TableServerLogs+" "+compare.Different+" text"], "%+v", out.Differences)
	require.Positive(t, got[compare.TableServerLogs+" "+compare.Different+" size"], "%+v", out.Differences)
}

// TestCompareThroughTheReaderRole: compare reads a database of ours
// through the site's reader role, whose search_path puts the dashboard
// views (the reference's columns under the same table names) first, and
// finds nothing different from the load that wrote it.
func TestCompareThroughTheReaderRole(t *testing.T) {
	t.Parallel()
	tree, db := demoLoaded(t)
	role := newReader(t, db, map[string]string{"DATABASE_URL": db})
	u, err := url.Parse(db)
	require.NoError(t, err)
	u.User = url.User(role)
	r := run(t, nil, "compare", tree, "--against", u.String(), "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var out compareOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.String())
	require.Equal(t, compare.SchemaOurs, out.Schema)
	require.Empty(t, out.Differences)
	// The traces stage, run without a database, links every row it pairs.
	require.NotContains(t, r.stderr, "trace links differ")
}
