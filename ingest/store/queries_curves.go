package store

import (
	"strconv"

	"github.com/inferencex/ingest/schema"
)

// scopeField is the SQL text of field i (a schema.Scope* position) of the
// curve_scope column of alias ("": unqualified).
func scopeField(alias string, i int) string {
	col := "curve_scope"
	if alias != "" {
		col = alias + "." + col
	}
	return col + "->>" + strconv.Itoa(i)
}

// The statements that keep latest_benchmarks per curve (migration 000013,
// curves.go). They run in one batch, in the transaction that changed the
// rows, in this order.

// qCurveOwnMarks tells whether this transaction changed anything
// latest_benchmarks shows.
const qCurveOwnMarks = `SELECT EXISTS (SELECT 1 FROM materialized_view_marks
	WHERE view_name = 'latest_benchmarks' AND xact = pg_current_xact_id())`

// qCurveStateUpdated records that an ingest brought the view up to date
// (its duration, $1 ms); a pending error of a refresh stays until a
// refresh clears it.
const qCurveStateUpdated = `
UPDATE materialized_view_state SET refreshed_at = clock_timestamp(), last_duration_ms = $1
WHERE view_name = 'latest_benchmarks'`

// The scratch tables of one update; they go with the transaction.
var qCurveScratch = []string{
	`CREATE TEMP TABLE curve_new_lines (
		curve_scope jsonb NOT NULL, model text NOT NULL, hardware text NOT NULL, framework text NOT NULL,
		precision text NOT NULL, benchmark_type text NOT NULL,
		workflow_run_id bigint NOT NULL, date date NOT NULL, run_started_at timestamptz, append_only boolean NOT NULL,
		image text, image_count integer NOT NULL, images_complete boolean NOT NULL
	) ON COMMIT DROP`,
	qCreatePointValues,
	`CREATE TEMP TABLE curve_touched (curve_scope jsonb PRIMARY KEY, curve_id integer) ON COMMIT DROP`,
	`CREATE TEMP TABLE curve_before (LIKE latest_benchmark_points) ON COMMIT DROP`,
	// The points the touched curves show after the update: a table with a
	// key rather than a CTE, so that the statements writing the difference
	// join it through an index or a hash, never rescan it per row (a CTE's
	// row estimate can fall to one).
	`CREATE TEMP TABLE curve_after (
		result_id bigint PRIMARY KEY, curve_id integer NOT NULL, config_id integer NOT NULL,
		snapshot_date date NOT NULL, snapshot_workflow_run_id bigint NOT NULL
	) ON COMMIT DROP`,
}

const (
	qCurveSavepoint = `SAVEPOINT latest_benchmarks`
	qCurveRelease   = `RELEASE SAVEPOINT latest_benchmarks`
	qCurveRollback  = `ROLLBACK TO SAVEPOINT latest_benchmarks`
)

// qCurveTakeMarks takes the change marks to apply — this transaction's own
// ($1 false: an ingest), or every committed one ($1 true: a refresh) — and
// returns how many it took and their runs with every other attempt of
// their GitHub runs (a new attempt hides the older attempts' rows); a mark
// without a run, or $2 (force), stands for every run.
const qCurveTakeMarks = `
WITH taken AS (
	DELETE FROM materialized_view_marks
	WHERE view_name = 'latest_benchmarks' AND ($1::boolean OR xact = pg_current_xact_id())
	RETURNING workflow_run_id
), runs AS (
	SELECT workflow_run_id AS id FROM taken WHERE workflow_run_id IS NOT NULL
	UNION
	SELECT id FROM workflow_runs WHERE $2::boolean OR EXISTS (SELECT 1 FROM taken WHERE workflow_run_id IS NULL)
)
SELECT (SELECT count(*) FROM taken), ARRAY(
	SELECT id FROM runs
	UNION
	SELECT o.id FROM runs r JOIN workflow_runs w ON w.id = r.id JOIN workflow_runs o ON o.github_run_id = w.github_run_id
	ORDER BY 1)`

// qCurveNewLines computes the lines of the runs ($1) from their rows: one per
// (curve, run, date) of a latest attempt, as benchmark_curve_runs has it.
//
// Only a GitHub run's latest attempt makes lines. That filter stays in SQL:
// it is not about the copies one ingest staged (the benchmark stage's
// Winners decide those) but about the attempts of a run stored by separate
// ingests, which only the database holds.
const qCurveNewLines = `
INSERT INTO curve_new_lines
SELECT benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
		g.benchmark_type, g.isl, g.osl, c.spec_method, c.disagg, g.offload_mode),
	c.model, c.hardware, c.framework, c.precision, g.benchmark_type,
	g.workflow_run_id, g.date, w.run_started_at, w.append_only,
	min(g.image), count(DISTINCT g.image), bool_and(g.image IS NOT NULL)
FROM unnest($1::bigint[]) AS r (id)
JOIN workflow_runs w ON w.id = r.id
CROSS JOIN LATERAL (
	-- the run's rows through the natural key, whatever the statistics say, folded to one
	-- row per (config, type, lengths, offload mode, date, image) before a scope is built
	SELECT b.workflow_run_id, b.config_id, b.benchmark_type, b.isl, b.osl, b.offload_mode, b.date, b.image
	FROM benchmark_results b WHERE b.workflow_run_id = r.id AND b.error IS NULL
	GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
) g
JOIN configs c ON c.id = g.config_id
WHERE w.run_attempt = (SELECT max(o.run_attempt) FROM workflow_runs o WHERE o.github_run_id = w.github_run_id)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`

// qCurveTouched lists the curves to recompute: those of the runs' new
// lines and those their stored lines were on.
const qCurveTouched = `
INSERT INTO curve_touched (curve_scope)
SELECT curve_scope FROM curve_new_lines
UNION
SELECT k.curve_scope FROM benchmark_curve_lines l
JOIN benchmark_curves k ON k.id = l.curve_id
WHERE l.workflow_run_id = ANY($1::bigint[])`

// qCurveLock takes a transaction lock per touched curve, in key order, so
// that two transactions never recompute one curve at once: the second
// recomputes it once the first has committed, seeing its rows (each later
// statement of READ COMMITTED takes a new snapshot).
const qCurveLock = `
SELECT count(pg_advisory_xact_lock(k.key)) FROM (
	SELECT hashtextextended('ingest-curve:' || curve_scope::text, 0) AS key FROM curve_touched ORDER BY 1
) k`

// qCurveAddCurves names the new curves and gives every touched curve its id.
var (
	qCurveAddCurves = `
INSERT INTO benchmark_curves (curve_scope, model, hardware, framework, precision, benchmark_type, spec_method, disagg)
SELECT DISTINCT ON (curve_scope) curve_scope, model, hardware, framework, precision, benchmark_type,
	` + scopeField("", schema.ScopeSpecMethod) + `, (` + scopeField("", schema.ScopeDisagg) + `)::boolean
FROM curve_new_lines
ON CONFLICT (curve_scope) DO NOTHING`
	qCurveIDs = `UPDATE curve_touched t SET curve_id = k.id FROM benchmark_curves k WHERE k.curve_scope = t.curve_scope`
)

// qCurveDropLines and qCurveAddLines replace the stored lines of the runs
// ($1) with
// the new ones, writing only what differs.
const (
	qCurveDropLines = `
DELETE FROM benchmark_curve_lines l
WHERE l.workflow_run_id = ANY($1::bigint[]) AND NOT EXISTS (
	SELECT 1 FROM curve_new_lines n JOIN curve_touched k ON k.curve_scope = n.curve_scope
	WHERE k.curve_id = l.curve_id AND n.workflow_run_id = l.workflow_run_id AND n.date = l.date
		AND n.run_started_at IS NOT DISTINCT FROM l.run_started_at AND n.append_only = l.append_only
		AND n.image IS NOT DISTINCT FROM l.image AND n.image_count = l.image_count
		AND n.images_complete = l.images_complete)`
	qCurveAddLines = `
INSERT INTO benchmark_curve_lines
SELECT k.curve_id, n.workflow_run_id, n.date, n.run_started_at, n.append_only, n.image, n.image_count, n.images_complete
FROM curve_new_lines n JOIN curve_touched k ON k.curve_scope = n.curve_scope
WHERE NOT EXISTS (SELECT 1 FROM benchmark_curve_lines l
	WHERE l.curve_id = k.curve_id AND l.workflow_run_id = n.workflow_run_id AND l.date = n.date)`
)

// qCurveAfter recomputes the touched curves into curve_after.
//
// chain walks each curve from its newest line down to the next older one
// while the rule allows (an index scan per step, never the curve's whole
// history); after takes each point from the newest run of the chain that
// has it, finding a run's rows of the curve through the curve's configs
// (configs' model and hardware index) and benchmark_results' natural key
// (run, config, type), and checking the exact scope: the work grows with
// the touched curves' points, not with the runs stored.
var qCurveAfter = `
INSERT INTO curve_after
WITH RECURSIVE chain AS (
	SELECT t.curve_id, l.workflow_run_id, l.date, l.run_started_at, l.append_only, l.image, l.image_count,
		l.images_complete, 1 AS run_rank, l.image AS root_image, l.date AS snapshot_date,
		l.workflow_run_id AS snapshot_workflow_run_id
	FROM curve_touched t
	CROSS JOIN LATERAL (
		SELECT * FROM benchmark_curve_lines l WHERE l.curve_id = t.curve_id
		ORDER BY l.date DESC, l.run_started_at DESC NULLS LAST, l.workflow_run_id DESC LIMIT 1
	) l
	UNION ALL
	SELECT c.curve_id, o.workflow_run_id, o.date, o.run_started_at, o.append_only, o.image, o.image_count,
		o.images_complete, c.run_rank + 1, c.root_image, c.snapshot_date, c.snapshot_workflow_run_id
	FROM chain c
	CROSS JOIN LATERAL (
		SELECT * FROM benchmark_curve_lines l WHERE l.curve_id = c.curve_id
			AND (l.date < c.date OR (l.date = c.date AND (
				(c.run_started_at IS NOT NULL AND (l.run_started_at IS NULL OR l.run_started_at < c.run_started_at))
				OR (l.run_started_at IS NOT DISTINCT FROM c.run_started_at AND l.workflow_run_id < c.workflow_run_id))))
		ORDER BY l.date DESC, l.run_started_at DESC NULLS LAST, l.workflow_run_id DESC LIMIT 1
	) o
	WHERE c.append_only AND c.image_count = 1 AND c.images_complete
		AND o.image_count = 1 AND o.images_complete AND o.image = c.root_image
), after AS MATERIALIZED (
	-- one row per point, the newest run's: integers first and the texts bytewise (the same
	-- groups, as every collation here is deterministic; most rows part on config and
	-- concurrency, and a text compared in the database's collation costs a strcoll)
	SELECT DISTINCT ON (br.config_id, br.conc, br.isl, br.osl, br.benchmark_type COLLATE "C",
			br.offload_mode COLLATE "C", br.recipe_fingerprint COLLATE "C")
		br.id AS result_id, ch.curve_id, br.config_id, ch.snapshot_date, ch.snapshot_workflow_run_id
	FROM chain ch
	JOIN benchmark_curves k ON k.id = ch.curve_id
	CROSS JOIN LATERAL (
		SELECT b.id, b.config_id, b.benchmark_type, b.isl, b.osl, b.offload_mode, b.recipe_fingerprint, b.conc
		FROM configs cf
		CROSS JOIN LATERAL (
			SELECT b.id, b.config_id, b.benchmark_type, b.isl, b.osl, b.offload_mode, b.recipe_fingerprint, b.conc, b.error
			FROM benchmark_results b
			WHERE b.workflow_run_id = ch.workflow_run_id AND b.config_id = cf.id AND b.benchmark_type = k.benchmark_type
			OFFSET 0 -- a probe per curve, run and config, never a join of whole runs
		) b
		WHERE cf.model = k.model AND cf.hardware = k.hardware AND cf.framework = k.framework
			AND cf.precision = k.precision
			AND (k.benchmark_type = 'agentic_traces' OR (cf.spec_method = k.spec_method AND cf.disagg = k.disagg))
			AND b.error IS NULL
			-- the rest of the exact scope (benchmark_curve_scope), column by column: lengths and,
			-- but for AgentX curves, the offload mode
			AND b.isl IS NOT DISTINCT FROM (` + scopeField("k", schema.ScopeISL) + `)::int AND b.osl IS NOT DISTINCT FROM (` + scopeField("k", schema.ScopeOSL) + `)::int
			AND (k.benchmark_type = 'agentic_traces' OR coalesce(b.offload_mode, 'off') = ` + scopeField("k", schema.ScopeOffloadMode) + `)
	) br
	ORDER BY br.config_id, br.conc, br.isl, br.osl, br.benchmark_type COLLATE "C", br.offload_mode COLLATE "C",
		br.recipe_fingerprint COLLATE "C", ch.run_rank
)
SELECT result_id, curve_id, config_id, snapshot_date, snapshot_workflow_run_id FROM after`

// qCurveApply writes the difference between the touched curves' points
// (curve_after) and latest_benchmark_points, keeping the rows they had in
// curve_before. It returns the curves, and the points added, removed and
// moved to another snapshot.
const qCurveApply = `
WITH kept AS (
	INSERT INTO curve_before
	SELECT p.* FROM latest_benchmark_points p JOIN curve_touched t ON t.curve_id = p.curve_id
	RETURNING 1
), removed AS (
	DELETE FROM latest_benchmark_points p USING curve_touched t
	WHERE p.curve_id = t.curve_id AND NOT EXISTS (SELECT 1 FROM curve_after a WHERE a.result_id = p.result_id)
	RETURNING 1
), moved AS (
	UPDATE latest_benchmark_points p
	SET snapshot_date = a.snapshot_date, snapshot_workflow_run_id = a.snapshot_workflow_run_id
	FROM curve_after a
	WHERE a.result_id = p.result_id
		AND (p.snapshot_date, p.snapshot_workflow_run_id) IS DISTINCT FROM (a.snapshot_date, a.snapshot_workflow_run_id)
	RETURNING 1
), added AS (
	INSERT INTO latest_benchmark_points (result_id, curve_id, config_id, snapshot_date, snapshot_workflow_run_id,
		workflow_run_id, benchmark_type, isl, osl, offload_mode, recipe_fingerprint, conc,
		tput_per_gpu, output_tput_per_gpu, median_intvty, p90_e2el, median_ttft)
	SELECT a.result_id, a.curve_id, a.config_id, a.snapshot_date, a.snapshot_workflow_run_id,
		b.workflow_run_id, b.benchmark_type, b.isl, b.osl, b.offload_mode, b.recipe_fingerprint, b.conc,
		coalesce(k.tput_per_gpu, v.tput_per_gpu), coalesce(k.output_tput_per_gpu, v.output_tput_per_gpu),
		coalesce(k.median_intvty, v.median_intvty), coalesce(k.p90_e2el, v.p90_e2el), coalesce(k.median_ttft, v.median_ttft)
	FROM curve_after a
	-- the added rows by their primary key (an array: an index scan whatever the estimates)
	JOIN (SELECT ctid AS row_ctid, * FROM benchmark_results WHERE id = ANY(ARRAY(SELECT result_id FROM curve_after))) b
		ON b.id = a.result_id
	-- the values the insert kept of this very row version, else read from its metrics (a
	-- NULL document when they were kept: jsonb is opened for the others only)
	LEFT JOIN written_point_values k ON k.result_id = b.id AND k.row_ctid = b.row_ctid
	LEFT JOIN LATERAL benchmark_impact_values(CASE WHEN k.result_id IS NULL THEN b.metrics END) v ON true
	WHERE NOT EXISTS (SELECT 1 FROM latest_benchmark_points p WHERE p.result_id = a.result_id)
	RETURNING 1
)
SELECT (SELECT count(*) FROM curve_touched), (SELECT count(*) FROM added), (SELECT count(*) FROM removed),
	(SELECT count(*) FROM moved), (SELECT count(*) FROM kept)`

// qCurveImpact lists, per curve the transaction's update touched, the
// points it showed before (side false, from curve_before) and shows now
// (true), with what names each point (a row deleted since, by an
// override, marked deleted, with the key and values its point kept), the
// runs of the row and of its snapshot, and the metrics the impact section
// compares (numbers only; NULL otherwise). The configs and GitHub runs the rows name are read
// after, once each (qCurveImpactConfigs, qCurveImpactRuns), not repeated
// on every row. The rows come in no order: curveImpact sorts them, since
// sorting these wide rows by the point key in SQL was most of the
// statement's time.
const qCurveImpact = `
SELECT s.curve_id, s.after, s.result_id, s.deleted, s.config_id,
	coalesce(s.workflow_run_id, 0), coalesce(s.benchmark_type, ''), s.isl, s.osl, coalesce(s.offload_mode, ''),
	s.recipe_fingerprint, coalesce(s.conc, 0), s.snapshot_date::text, s.snapshot_workflow_run_id,
	s.tput_per_gpu, s.output_tput_per_gpu, s.median_intvty, s.p90_e2el, s.median_ttft
FROM (
	-- The points as latest_benchmark_points keeps them (key, run and the five values, kept
	-- up to date by the update trigger of benchmark_results; a row shown before and deleted
	-- since, by an override, marked by its delete trigger): never a read of the rows.
	SELECT false AS after, f.*, f.result_deleted AS deleted
	FROM curve_before f
	WHERE EXISTS (SELECT FROM curve_touched k WHERE k.curve_id = f.curve_id)
	UNION ALL
	SELECT true, p.*, false
	FROM latest_benchmark_points p JOIN curve_touched k ON k.curve_id = p.curve_id
) s`

// qCurveImpactConfigs reads the configs ($1) of the impact's rows: their
// arm (topology and decoding).
const qCurveImpactConfigs = `
SELECT c.id, c.spec_method, c.disagg, c.is_multinode, c.prefill_tp, c.prefill_ep, c.prefill_dp_attention,
	c.prefill_num_workers, c.decode_tp, c.decode_ep, c.decode_dp_attention, c.decode_num_workers,
	c.num_prefill_gpu, c.num_decode_gpu
FROM configs c WHERE c.id = ANY($1::bigint[])`

// qCurveImpactRuns reads the GitHub run and attempt of the workflow runs
// ($1) of the impact's rows and snapshots.
const qCurveImpactRuns = `SELECT w.id, w.github_run_id, w.run_attempt FROM workflow_runs w WHERE w.id = ANY($1::bigint[])`

// qCurveTouchedOnly lists the touched curves (one may end with no point
// before and none after), with how many points qCurveImpact gives each
// side.
const qCurveTouchedOnly = `
SELECT t.curve_id, t.curve_scope::text, coalesce(b.n, 0), coalesce(a.n, 0)
FROM curve_touched t
LEFT JOIN (SELECT curve_id, count(*)::int AS n FROM curve_before GROUP BY 1) b ON b.curve_id = t.curve_id
LEFT JOIN (SELECT p.curve_id, count(*)::int AS n FROM latest_benchmark_points p
	JOIN curve_touched k ON k.curve_id = p.curve_id GROUP BY 1) a ON a.curve_id = t.curve_id
ORDER BY t.curve_id`
