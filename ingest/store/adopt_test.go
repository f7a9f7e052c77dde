package store_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/ingest/trace"
)

// refDatabase builds a database in the reference's shape at level, filled
// with SmallOptions rows, and returns its URL and the fill's counts.
func refDatabase(t *testing.T, level string) (string, refdb.Stats) {
	t.Helper()
	// The filled reference is the same for every test of a level: built
	// once per level (named by its number, "017"), copied for each test.
	number, _, _ := strings.Cut(level, "_")
	return pgtest.NewFrom(t, "ref"+number, func(ctx context.Context, db string) (refdb.Stats, error) {
		conn, err := pgx.Connect(ctx, db)
		if err != nil {
			return refdb.Stats{}, err
		}
		defer conn.Close(ctx)
		if err := refdb.Create(ctx, conn, level); err != nil {
			return refdb.Stats{}, err
		}
		return refdb.Fill(ctx, conn, refdb.SmallOptions(7))
	})
}

// Adopt converts a reference database at each level: every row lands in
// our tables with its id, the reference's tables move to
// reference_archive, user_feedback and schema_migrations stay, and the
// schema is then ours (writes pass CheckWritable).
func TestAdoptLevels(t *testing.T) {
	t.Parallel()
	for _, level := range refdb.Levels() {
		t.Run(level, func(t *testing.T) {
			ctx := context.Background()
			db, stats := refDatabase(t, level)
			st, err := store.Open(ctx, db, zaptest.NewLogger(t))
			require.NoError(t, err)
			defer st.Close()
			require.ErrorIs(t, st.CheckWritable(ctx), store.ErrForeignSchema)

			plan, err := st.PlanAdopt(ctx)
			require.NoError(t, err)
			require.Empty(t, plan.Refusals)
			require.Equal(t, level, plan.Newest)
			res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "SemiAnalysisAI/InferenceX", ToolVersion: "test"})
			require.NoError(t, err)
			require.Equal(t, stats.BenchmarkResults, res.Rows["benchmark_results"])
			require.Equal(t, stats.EvalSamples, res.Rows["eval_samples"])
			require.Equal(t, stats.WorkflowRuns, res.Rows["ingests"])

			require.NoError(t, st.CheckWritable(ctx))
			v, err := st.SchemaVersion(ctx)
			require.NoError(t, err)
			require.Equal(t, v.Latest, v.Version)

			var feedback, archived, refFiles int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM public.user_feedback),
				(SELECT count(*) FROM reference_archive.benchmark_results), (SELECT count(*) FROM public.schema_migrations)`).
				Scan(&feedback, &archived, &refFiles))
			require.Equal(t, stats.UserFeedback, feedback)
			require.Equal(t, stats.BenchmarkResults, archived)
			require.Positive(t, refFiles)

			// The foreign keys dropped for the copy are back.
			var fks int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f'
				AND conrelid IN ('public.eval_samples'::regclass, 'public.benchmark_results'::regclass)`).Scan(&fks))
			require.Equal(t, int64(7), fks)

			// The ids the site reads are the reference's, and so are the
			// metrics but for what an ingest of the run derives into them
			// (the owned server-metric keys of AgentX rows, their
			// published_* copies, derived_* keys, the KV-cache pool).
			var missing, changed int64
			require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE b.id IS NULL), count(*) FILTER (WHERE b.metrics <> r.metrics)
				FROM reference_archive.benchmark_results r
				LEFT JOIN public.benchmark_results b ON b.id = r.id AND (r.metrics - $1::text[]) <@ b.metrics
					AND b.trace_replay_id IS NOT DISTINCT FROM r.trace_replay_id AND b.server_log_id IS NOT DISTINCT FROM r.server_log_id`,
				trace.ServerMetricsReplaced()).Scan(&missing, &changed))
			require.Zero(t, missing)
			require.Positive(t, changed, "the AgentX rows hold the derived keys")
		})
	}
}

// dumpDatabase is pg_dump's plain text of the database: schema and rows.
func dumpDatabase(t *testing.T, db string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "pg_dump", "--no-owner", "--dbname", db).Output()
	require.NoError(t, err)
	// \restrict lines carry a random key per dump
	return regexp.MustCompile(`(?m)^\\(un)?restrict .*$`).ReplaceAllString(string(out), "")
}

// requireSameDump fails, without printing gigabytes, when got is not want.
func requireSameDump(t *testing.T, want, got, what string) {
	t.Helper()
	if want != got {
		t.Fatalf("%s: the database changed (%d bytes of dump before, %d after)", what, len(want), len(got))
	}
}

// An adopt stopped at any step — its context cancelled, as a kill of the
// process does, or its backend terminated — leaves the database exactly as
// it was before (one transaction), and a later adopt then succeeds.
func TestAdoptKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := refDatabase(t, refdb.Level017)
	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	before := dumpDatabase(t, db)
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)

	var steps []string
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
		steps = append(steps, name)
		return errors.New("stop")
	}})
	require.Error(t, err)
	// Every step name once, by letting each run: collect them from a
	// rehearsal stopped only at the commit.
	steps = nil
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
		if !slices.Contains(steps, name) {
			steps = append(steps, name)
		}
		if name == "commit" {
			return errors.New("stop before commit")
		}
		return nil
	}})
	require.ErrorContains(t, err, "stop before commit")
	require.Contains(t, steps, "agentic_trace_replay")
	require.Contains(t, steps, "swap")
	requireSameDump(t, before, dumpDatabase(t, db), "stopped before its commit")

	for _, at := range []string{"migrations", "server_logs", "agentic_trace_replay", "eval_samples", "gpu_metric_sample_chunks", "curves", "swap"} {
		t.Run("cancel at "+at, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := st.Adopt(cctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
				if name == at {
					cancel()
				}
				return nil
			}})
			require.Error(t, err)
			requireSameDump(t, before, dumpDatabase(t, db), t.Name())
		})
	}
	t.Run("backend terminated", func(t *testing.T) {
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", Step: func(name string) error {
			if name == "eval_samples" {
				_, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`)
				return err
			}
			return nil
		}})
		require.Error(t, err)
		requireSameDump(t, before, dumpDatabase(t, db), t.Name())
	})

	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r"})
	require.NoError(t, err)
	require.NotEqual(t, len(before), len(dumpDatabase(t, db)))
}

// The reference's branch files are levels adopt knows: with
// 008_benchmark_results_kv_transfer_lib.sql and 016_measurement_snapshots.sql
// recorded, it converts, moving the receipt table and its rows to
// reference_archive unconverted, and keeping each row's kv_transfer_lib,
// which the site reads from benchmark_results and latest_benchmarks.
func TestAdoptBranchFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, stats := refDatabase(t, refdb.Level017)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, refdb.AddBranchFiles(ctx, conn))
	_, err = conn.Exec(ctx, `INSERT INTO measurement_snapshots (source_repo, source_run_id, source_attempt, receipt_id,
		bundle_digest, receipt, state) VALUES ('SemiAnalysisAI/InferenceX', 21000000000, 1, repeat('a', 64), repeat('b', 64), '{}', 'complete')`)
	require.NoError(t, err)
	// Two rows name their library, one of them shown by the latest chart.
	var shown int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT min(id) FROM latest_benchmarks`).Scan(&shown))
	_, err = conn.Exec(ctx, `UPDATE benchmark_results SET kv_transfer_lib = CASE WHEN id = $1 THEN 'nixl' ELSE 'mooncake' END
		WHERE id IN ($1, (SELECT min(id) FROM benchmark_results WHERE id <> $1))`, shown)
	require.NoError(t, err)
	const siteReads = `SELECT (SELECT jsonb_object_agg(br.id, to_jsonb(br) ->> 'kv_transfer_lib') FROM benchmark_results br
			WHERE to_jsonb(br) ->> 'kv_transfer_lib' IS NOT NULL),
		(SELECT jsonb_object_agg(lb.id, to_jsonb(lb) ->> 'kv_transfer_lib') FROM latest_benchmarks lb
			WHERE to_jsonb(lb) ->> 'kv_transfer_lib' IS NOT NULL)`
	// (The fixture's materialized view predates the column: the rows'
	// values are read before, the chart's after.)
	var rowsBefore, latestBefore map[string]any
	require.NoError(t, conn.QueryRow(ctx, siteReads).Scan(&rowsBefore, &latestBefore))
	require.Len(t, rowsBefore, 2)

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.True(t, plan.KVTransferLib)
	require.True(t, plan.Snapshots)
	require.Equal(t, int64(2), plan.KVTransferLibValues)
	require.Empty(t, plan.Refusals)
	require.Contains(t, plan.Files, "008_benchmark_results_kv_transfer_lib.sql")
	require.Contains(t, plan.Files, "016_measurement_snapshots.sql")
	var planned bool
	for _, tb := range plan.Tables {
		planned = planned || (tb.Name == "measurement_snapshots" && tb.Rows == 1)
	}
	require.True(t, planned, "the plan lists the receipt table with its rows")
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
	require.NoError(t, err)
	require.Equal(t, stats.BenchmarkResults, res.Rows["benchmark_results"])
	var snapshots int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM reference_archive.measurement_snapshots`).Scan(&snapshots))
	require.Equal(t, int64(1), snapshots)
	require.NoError(t, st.CheckWritable(ctx))

	// The site's reads, as the reader role resolves them.
	_, err = conn.Exec(ctx, `SET search_path = dashboard, public`)
	require.NoError(t, err)
	var rowsAfter, latestAfter map[string]any
	require.NoError(t, conn.QueryRow(ctx, siteReads).Scan(&rowsAfter, &latestAfter))
	require.Equal(t, rowsBefore, rowsAfter)
	require.Equal(t, map[string]any{strconv.FormatInt(shown, 10): "nixl"}, latestAfter)
}

// powerxReads are the site's PowerX reads (docs/dashboard-schema.md,
// "PowerX reads") over every run, series and point at once.
var powerxReads = map[string]string{
	"run-series": `SELECT g.github_run_id, s.id, s.artifact_name, s.config_key, s.file_name, s.vendor, s.sample_interval_s,
		s.sample_count, s.gpu_count, s.started_at, s.ended_at, s.sidecars, s.csv_sha256, s.ingested_at,
		(SELECT array_agg(l.benchmark_result_id ORDER BY l.benchmark_result_id)
		   FROM benchmark_result_gpu_metrics l WHERE l.series_id = s.id) AS benchmark_result_ids,
		(SELECT jsonb_agg(b.power_audit ORDER BY b.id) FROM benchmark_result_gpu_metrics l
		   JOIN benchmark_results b ON b.id = l.benchmark_result_id
		   WHERE l.series_id = s.id AND b.power_audit IS NOT NULL) AS power_audits
		FROM (SELECT DISTINCT github_run_id FROM workflow_runs) g
		JOIN gpu_metric_series s ON s.workflow_run_id = (SELECT id FROM workflow_runs WHERE github_run_id = g.github_run_id
			ORDER BY run_attempt DESC LIMIT 1)`,
	"series-stats": `SELECT series_id, gpu_index, metric, sample_count, min_value, max_value, mean_value,
		median_value, p95_value, p99_value, stddev_value FROM gpu_metric_gpu_stats`,
	"series-samples": `SELECT series_id, gpu_index, sampled_at, power_w, temperature_c, sm_clock_mhz, mem_clock_mhz,
		gpu_util_pct, mem_util_pct, edge_temp_c, mem_temp_c, gfx_voltage_mv, soc_voltage_mv,
		mem_voltage_mv, fclk_mhz, socclk_mhz, mm_activity_pct FROM gpu_metric_samples`,
	"series-version": `SELECT id, csv_sha256, sample_count, ingested_at FROM gpu_metric_series`,
	"point-revision": `SELECT link.benchmark_result_id, md5(jsonb_agg(jsonb_build_array(
		s.id, s.ingested_at, s.csv_sha256, s.sample_count, s.sidecars,
		coalesce((to_jsonb(s)->>'stats_version')::integer, 0),
		(SELECT jsonb_agg(jsonb_build_array(l.benchmark_result_id, b.power_audit) ORDER BY l.benchmark_result_id)
		   FROM benchmark_result_gpu_metrics l JOIN benchmark_results b ON b.id = l.benchmark_result_id
		   WHERE l.series_id = s.id)) ORDER BY s.id)::text) AS revision
		FROM benchmark_result_gpu_metrics link JOIN gpu_metric_series s ON s.id = link.series_id
		GROUP BY link.benchmark_result_id`,
}

// readDigests runs each PowerX read on db: its row count and an md5 of
// its rows as text.
func readDigests(t *testing.T, db string) map[string]string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	out := map[string]string{}
	for name, q := range powerxReads {
		var n int64
		var d string
		require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*), md5(coalesce(string_agg(t::text, E'\n' ORDER BY t::text), ''))
			FROM (`+q+`) t`).Scan(&n, &d), name)
		require.Positive(t, n, name)
		out[name] = fmt.Sprintf("%d rows, md5 %s", n, d)
	}
	return out
}

// The reference's GPU metric rows (levels 016 and 017) are converted: every
// PowerX read of the site returns the same rows and values after adopt
// (series ids, samples, digests, links, revisions), the samples packed
// into our chunks, the formats and hosts ours derived. At level 016 (no
// stats_version yet) the series read as version 0, as before.
func TestAdoptGPUMetrics(t *testing.T) {
	t.Parallel()
	t.Run("017", func(t *testing.T) { adoptGPUMetrics(t, false) })
	t.Run("016", func(t *testing.T) { adoptGPUMetrics(t, true) })
}

func adoptGPUMetrics(t *testing.T, level016 bool) {
	ctx := context.Background()
	db, stats := refDatabase(t, refdb.Level017)
	require.Positive(t, stats.GPUSeries)
	if level016 {
		_, err := pgxExec(ctx, db, `ALTER TABLE gpu_metric_series DROP COLUMN stats_version;
			DELETE FROM schema_migrations WHERE filename = '017_gpu_metric_stats_version.sql'`)
		require.NoError(t, err)
	}
	before := readDigests(t, db)
	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Empty(t, plan.Refusals)
	require.True(t, plan.GPU)
	require.Equal(t, !level016, plan.GPUStatsVersion)
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
	require.NoError(t, err)
	require.Equal(t, stats.GPUSeries, res.Rows["gpu_metric_series"])
	require.Equal(t, stats.GPUStats, res.Rows["gpu_metric_gpu_stats"])
	require.Equal(t, stats.GPULinks, res.Rows["benchmark_result_gpu_metrics"])
	require.Equal(t, before, readDigests(t, db))

	var samples, dcgm, hosts, amd int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT (SELECT sum(sample_count) FROM gpu_metric_sample_chunks),
		(SELECT count(*) FROM gpu_metric_series WHERE format = 'dcgm'), (SELECT count(hostname) FROM gpu_metric_series),
		(SELECT count(*) FROM gpu_metric_series WHERE format = 'amd-smi' AND vendor = 'amd')`).Scan(&samples, &dcgm, &hosts, &amd))
	require.Equal(t, stats.GPUSamples, samples)
	var unordered int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM gpu_metric_sample_chunks
		WHERE sampled_at <> (SELECT array_agg(x ORDER BY x) FROM unnest(sampled_at) AS x)`).Scan(&unordered))
	require.Zero(t, unordered, "every chunk in time order")
	require.Positive(t, dcgm)
	require.Equal(t, dcgm, hosts)
	require.Positive(t, amd)
	// A new series draws an id past the reference's.
	var next int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('gpu_metric_series', 'id'))`).Scan(&next))
	require.Greater(t, next, stats.GPUSeries)
}

// Eval rows of one key with NULL isl, osl or conc (the reference's plain
// UNIQUE never made them conflict, so a re-ingest added a row) are merged
// into the newest: it keeps its id and values, and holds every document
// either had, the newest row's where both have one. So too when the
// samples are copied in many batches, the two rows in different ones.
func TestAdoptMergesDuplicateEvalKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		perBatch int64
	}{{"one batch", 0}, {"many batches", 7}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			adoptMergesDuplicateEvalKeys(t, c.perBatch)
		})
	}
}

func adoptMergesDuplicateEvalKeys(t *testing.T, perBatch int64) {
	ctx := context.Background()
	db, stats := refDatabase(t, refdb.Level017)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE eval_results SET isl = NULL, osl = NULL, conc = NULL WHERE id = 1`)
	require.NoError(t, err)
	var newer int64
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO eval_results (workflow_run_id, config_id, task, date, isl, osl, conc,
		lm_eval_version, metrics) SELECT workflow_run_id, config_id, task, date, NULL, NULL, NULL, lm_eval_version, '{"em_strict": 0.5}'
		FROM eval_results WHERE id = 1 RETURNING id`).Scan(&newer))
	_, err = conn.Exec(ctx, `INSERT INTO eval_samples (eval_result_id, doc_id, prompt, target, response, passed, score, metrics, data)
		SELECT $1, doc_id, prompt, target, 'newer', passed, score, metrics, data FROM eval_samples WHERE eval_result_id = 1 AND doc_id < 10`, newer)
	require.NoError(t, err)
	var docs int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM eval_samples WHERE eval_result_id = 1`).Scan(&docs))
	require.Greater(t, docs, int64(10))

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Empty(t, plan.Refusals)
	require.Equal(t, int64(1), plan.EvalMerges)
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test", EvalBatchSamples: perBatch})
	require.NoError(t, err)
	require.Equal(t, stats.EvalResults, res.Rows["eval_results"])
	require.Equal(t, stats.EvalSamples, res.Rows["eval_samples"])

	var keyRows, kept int64
	var metrics string
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*), max(id), max(metrics::text) FROM eval_results e
		WHERE (workflow_run_id, config_id, task) = (SELECT workflow_run_id, config_id, task FROM reference_archive.eval_results WHERE id = 1)
		AND isl IS NULL AND osl IS NULL AND conc IS NULL`).Scan(&keyRows, &kept, &metrics))
	require.Equal(t, int64(1), keyRows)
	require.Equal(t, newer, kept)
	require.JSONEq(t, `{"em_strict": 0.5}`, metrics)
	var held, fromNewer int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE response = 'newer')
		FROM eval_samples WHERE eval_result_id = $1`, newer).Scan(&held, &fromNewer))
	require.Equal(t, docs, held)
	require.Equal(t, int64(10), fromNewer)
}

// A run the reference stored with run_attempt 0 (its GCS backfill's,
// when it could not read the run from GitHub) is adopted as attempt 1,
// the ledger knowing it so; one whose run also has an attempt 1 refuses
// the adopt.
func TestAdoptUnknownAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, refdb.Create(ctx, conn, refdb.Level010))
	o := refdb.SmallOptions(7)
	o.UnknownAttemptEvery = 3
	_, err = refdb.Fill(ctx, conn, o)
	require.NoError(t, err)
	var zero int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM workflow_runs WHERE run_attempt = 0`).Scan(&zero))
	require.Positive(t, zero)

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Empty(t, plan.Refusals)
	_, err = st.Adopt(ctx, plan, store.AdoptOptions{Repo: "SemiAnalysisAI/InferenceX", ToolVersion: "test"})
	require.NoError(t, err)
	var ones, ledger int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE w.run_attempt = 1),
			count(*) FILTER (WHERE g.run_attempt = 1 AND g.target = 'adopted')
		FROM reference_archive.workflow_runs r JOIN public.workflow_runs w ON w.id = r.id
		JOIN public.ingests g ON g.workflow_run_id = w.id WHERE r.run_attempt = 0`).Scan(&ones, &ledger))
	require.Equal(t, zero, ones)
	require.Equal(t, zero, ledger)

	ref, _ := refDatabase(t, refdb.Level010)
	c2, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer c2.Close(ctx)
	_, err = c2.Exec(ctx, `INSERT INTO workflow_runs (github_run_id, run_attempt, name, created_at, date)
		SELECT github_run_id, 0, name, created_at, date FROM workflow_runs WHERE run_attempt = 1 ORDER BY id LIMIT 1`)
	require.NoError(t, err)
	s2, err := store.Open(ctx, ref, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer s2.Close()
	plan, err = s2.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Len(t, plan.Refusals, 1, "%+v", plan.Refusals)
}
