package cli_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/ingest/trace"
)

// referenceDB builds a database in the reference's shape at level, filled
// as the reference's ETL writes it, its runs on and around 2026-11-20
// (the date the read contracts ask about).
func referenceDB(t *testing.T, level string) string {
	t.Helper()
	ctx := t.Context()
	db := pgtest.NewEmpty(t)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	require.NoError(t, refdb.Create(ctx, conn, level))
	o := refdb.SmallOptions(11)
	o.Start = time.Date(2026, 11, 19, 20, 0, 0, 0, time.UTC)
	_, err = refdb.Fill(ctx, conn, o)
	require.NoError(t, err)
	return db
}

// siteFacts picks ids of the reference database for the read contracts:
// an eval result with samples, and benchmark rows with a trace, with a
// server log.
func siteFacts(t *testing.T, db string) []demoFacts {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var eval, trace, trace2, logRow int64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT
		(SELECT min(eval_result_id) FROM eval_samples),
		(SELECT min(id) FROM benchmark_results WHERE trace_replay_id IS NOT NULL),
		(SELECT max(id) FROM benchmark_results WHERE trace_replay_id IS NOT NULL),
		(SELECT min(id) FROM benchmark_results WHERE server_log_id IS NOT NULL)`).Scan(&eval, &trace, &trace2, &logRow))
	return []demoFacts{{evalResult: eval, agentic: trace, disagg: trace2}, {evalResult: eval, agentic: logRow, disagg: trace}}
}

// siteReads runs every read of the site's (readContracts) over conn with
// each set of facts, rows normalised for comparison. Before adopt, a read
// the reference's level cannot answer (a newer site's column) is left out.
func siteReads(t *testing.T, conn *pgx.Conn, facts []demoFacts, before bool) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for i, f := range facts {
		for _, c := range readContracts {
			var args []any
			if c.args != nil {
				args = c.args(f)
			}
			var rows []map[string]any
			q, err := conn.Query(t.Context(), c.sql, args...)
			if err == nil {
				rows, err = pgx.CollectRows(q, pgx.RowToMap)
			}
			if before && err != nil {
				continue // a read of a newer site than the reference's level
			}
			require.NoError(t, err, c.read)
			for _, r := range rows {
				for k, v := range r {
					// the reference's numeric scores come back as ours
					// (double precision) cast: compare the numbers.
					if n, ok := v.(pgtype.Numeric); ok {
						fv, err := n.Float64Value()
						require.NoError(t, err)
						r[k] = fv.Float64
					}
				}
			}
			out[fmt.Sprintf("%s #%d", c.read, i)] = rows
		}
	}
	return out
}

// TestAdoptSiteReads: a database in the reference's shape, at each level,
// adopted; every read of the site returns the same rows and values after
// adopt, through our reader role, as before through the reference's
// tables. A dry run first prints the plan and changes nothing.
func TestAdoptSiteReads(t *testing.T) {
	for _, level := range refdb.Levels() {
		t.Run(level, func(t *testing.T) {
			db := referenceDB(t, level)
			vars := map[string]string{"DATABASE_URL": db}
			facts := siteFacts(t, db)
			before := func() map[string][]map[string]any {
				conn, err := pgx.Connect(t.Context(), db)
				require.NoError(t, err)
				defer conn.Close(context.WithoutCancel(t.Context()))
				return siteReads(t, conn, facts, true)
			}()
			var nonEmpty int
			for _, rows := range before {
				if len(rows) > 0 {
					nonEmpty++
				}
			}
			require.Greater(t, nonEmpty, len(readContracts)/2, "the reads find the reference's rows")

			dry := run(t, vars, "adopt", "--dry-run")
			requireCode(t, cli.ExitOK, dry)
			require.Contains(t, dry.stdout, "newest "+level)
			require.Contains(t, dry.stdout, "benchmark_results")
			require.Contains(t, dry.stdout, "dry run: nothing was changed")
			if level == refdb.Level017 {
				require.Regexp(t, `gpu_metric_samples\s+[1-9][0-9]* rows`, dry.stdout)
				require.Contains(t, dry.stdout, "GPU metrics: series, digests and links copied")
			}
			requireCode(t, cli.ExitUsage, run(t, vars, "migrate", "up"))

			res := run(t, vars, "adopt")
			requireCode(t, cli.ExitOK, res)
			require.Contains(t, res.stdout, "adopted in")
			requireCode(t, cli.ExitOK, run(t, vars, "migrate", "up"))

			role := newReader(t, db, vars)
			after := siteReads(t, connectAs(t, db, role), facts, false)
			for read, rows := range before {
				// rows in no stated order may come in another
				require.ElementsMatch(t, withoutComputed(rows), withoutComputed(after[read]), read)
			}
			// The trace payloads are ours, computed from the blobs
			// (store.TestAdoptComputesTracePayloads compares them).
			for read, key := range map[string]string{"agentic-shared.ts: fetchAggregateStatsRows #0": "stats",
				"request-timeline.ts: getRequestTimeline #0": "request_timeline"} {
				require.NotEmpty(t, after[read], read)
				for _, r := range after[read] {
					want := map[string]int{"stats": trace.AggregateStatsVersion, "request_timeline": trace.RequestTimelineVersion}[key]
					require.EqualValues(t, want, r[key].(map[string]any)["version"], read)
				}
			}

			// A new run then lands and extends the curves by our rules.
			demo := t.TempDir()
			require.NoError(t, fixtures.WriteDemoRun(demo))
			requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
			var latest int64
			admin := dashboardConn(t, db)
			require.NoError(t, admin.QueryRow(t.Context(), `SELECT count(*) FROM latest_benchmarks l
				JOIN workflow_runs w ON w.id = l.workflow_run_id WHERE w.github_run_id = 28485856738`).Scan(&latest))
			require.Positive(t, latest)
		})
	}
}

// withoutComputed copies rows without the trace payloads, which adopt
// computes from the trace blobs, and without the metrics an ingest of the
// run derives into a row, which adopt derives too (store.TestAdoptLevels
// checks the rest is kept): the derived_* keys, the owned server-metric
// keys with their published_* copies and marker (the KV-cache pool among
// them, also as a read's column).
func withoutComputed(rows []map[string]any) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{}
		for k, v := range r {
			switch k {
			case "stats", "chart_series", "request_timeline", "timeline_version", "timeline_storage_bytes", "kv_cache_pool_tokens":
				continue
			}
			if m, ok := v.(map[string]any); ok && k == "metrics" {
				c := maps.Clone(m)
				for mk := range c {
					if strings.HasPrefix(mk, "derived_") || strings.HasPrefix(mk, trace.PublishedPrefix) ||
						mk == trace.ServerMetricsMarker || slices.Contains(trace.ServerMetricKeys, mk) {
						delete(c, mk)
					}
				}
				v = c
			}
			out[i][k] = v
		}
	}
	return out
}

// An unknown migration file of the reference is refused, naming it, and
// nothing changes.
func TestAdoptUnknownLevel(t *testing.T) {
	db := referenceDB(t, refdb.Level010)
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	_, err = conn.Exec(t.Context(), `INSERT INTO schema_migrations (filename) VALUES ('018_something_new.sql')`)
	require.NoError(t, err)
	for _, args := range [][]string{{"adopt", "--dry-run"}, {"adopt"}} {
		r := run(t, map[string]string{"DATABASE_URL": db}, args...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, `newest migration file "018_something_new.sql"`)
	}
	var tables int64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname IN ('dashboard', 'reference_archive', 'ingest_adopt')`).Scan(&tables))
	require.Zero(t, tables)
}
