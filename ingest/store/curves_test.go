package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// curvePoint is one benchmark row of a curve test: its config's variant,
// its point and its image.
type curvePoint struct {
	agentic  bool
	spec     string // "none" unless set
	disagg   bool
	prefill  int16 // prefill TP: a topology variant (8 unless set)
	offload  string
	isl      int // fixed-seq only; 1024 unless set
	conc     int
	image    string // "" is NULL
	recipe   string // "" is NULL
	power    bool   // carries power_invalid_reasons and power_audit
	errorMsg string // written by hand after the ingest
}

// curveRun is one ingested workflow run.
type curveRun struct {
	id         int64
	attempt    int
	day        int // 2026-11-<day>
	hour       int // run_started_at's hour (0: 8)
	appendOnly bool
	points     []curvePoint
}

func (p curvePoint) point(tput float64) schema.BenchmarkPoint {
	spec, prefill, offload := p.spec, p.prefill, p.offload
	if spec == "" {
		spec = "none"
	}
	if prefill == 0 {
		prefill = 8
	}
	if offload == "" {
		offload = "off"
	}
	bp := schema.BenchmarkPoint{
		Config: schema.Config{Hardware: "gb300", Framework: "dynamo-trt", Model: "glm5.2", Precision: "fp4", SpecMethod: spec,
			Disagg: p.disagg, PrefillTP: int(prefill), PrefillEP: 1, DecodeTP: 8, DecodeEP: 1, NumPrefillGPU: int(prefill), NumDecodeGPU: 8},
		BenchmarkType: schema.BenchmarkSingleTurn, Conc: p.conc, OffloadMode: offload,
		Metrics: map[string]any{"tput_per_gpu": tput},
	}
	if p.agentic {
		bp.BenchmarkType = schema.BenchmarkAgenticTraces
	} else {
		isl := p.isl
		if isl == 0 {
			isl = 1024
		}
		bp.ISL, bp.OSL = intp(isl), intp(1024)
	}
	if p.image != "" {
		bp.Image = &p.image
	}
	if p.recipe != "" {
		bp.RecipeFingerprint = &p.recipe
	}
	if p.power {
		bp.PowerInvalidReasons = json.RawMessage(`["sampling_gap_exceeded"]`)
		bp.PowerAudit = json.RawMessage(`{"expected_gpu_count":16}`)
	}
	return bp
}

func (r curveRun) start() schema.RunStart {
	attempt, hour := r.attempt, r.hour
	if attempt == 0 {
		attempt = 1
	}
	if hour == 0 {
		hour = 8
	}
	created := time.Date(2026, 11, r.day, hour, 0, 0, 0, time.UTC)
	return schema.RunStart{
		Run:       schema.RunIdentity{Repo: "o/r", SourceRunID: r.id, SourceRunAttempt: attempt},
		Meta:      schema.RunMeta{Name: "Run Sweep", CreatedAt: created, RunStartedAt: created.Add(time.Minute)},
		Target:    "test",
		StartedAt: created,
	}
}

// curveIngest writes a run as an ingest does and updates the view in its
// transaction; finish decides what becomes of it (commit, dry run,
// rollback), after look has seen the transaction.
func curveIngest(t *testing.T, st *store.Store, r curveRun, finish string, look func(*store.RunTx)) schema.ViewRefresh {
	t.Helper()
	ctx := context.Background()
	tx, err := st.BeginRun(ctx, r.start())
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	rows := make([]schema.StagedBenchmark, len(r.points))
	for i, p := range r.points {
		rows[i] = schema.StagedBenchmark{Point: p.point(float64(r.id%1000) + float64(i)/10),
			Source: schema.Provenance{Artifact: "bmk", File: fmt.Sprintf("r%d.json", i)}}
	}
	win := benchmarks.NewWinners()
	_, err = tx.StageBenchmarks(ctx, iterate(rows), win.Add)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
	require.NoError(t, err)
	_, _, err = tx.WriteChangelog(ctx, []schema.ChangelogRow{{MergeRunID: r.id, MergeRunAttempt: 1, BaseRef: "a", HeadRef: "b",
		ConfigKeys: []string{"k"}, Description: "d", AppendOnly: r.appendOnly}})
	require.NoError(t, err)
	v, err := tx.UpdateLatestBenchmarks(ctx)
	require.NoError(t, err)
	if look != nil {
		look(tx)
	}
	switch finish {
	case "commit", "dry-run":
		sum := &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}
		require.NoError(t, tx.Finish(ctx, sum, json.RawMessage(`[]`), finish == "dry-run"))
	case "rollback":
		require.NoError(t, tx.Rollback(ctx))
	}
	// Errors are written by hand, as nothing of ours writes them.
	for _, p := range r.points {
		if p.errorMsg != "" {
			_, err := st.Pool().Exec(ctx, `UPDATE benchmark_results b SET error = $3 FROM workflow_runs w
				WHERE w.id = b.workflow_run_id AND w.github_run_id = $1 AND w.run_attempt = $4 AND b.conc = $2`,
				r.id, p.conc, p.errorMsg, max(r.attempt, 1))
			require.NoError(t, err)
		}
	}
	return v
}

// shown is one row of latest_benchmarks: the GitHub run of the row and of
// its snapshot, the point.
type shown struct {
	Run, Snapshot int64
	SnapshotDate  string
	Conc          int
	Offload       string
	Disagg        bool
}

func shownRows(t *testing.T, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, from string) []shown {
	t.Helper()
	rows, err := q.Query(context.Background(), `
		SELECT wr.github_run_id, sw.github_run_id, lb.snapshot_date::text, lb.conc, lb.offload_mode, c.disagg
		FROM `+from+` lb
		JOIN workflow_runs wr ON wr.id = lb.workflow_run_id
		JOIN workflow_runs sw ON sw.id = lb.snapshot_workflow_run_id
		JOIN configs c ON c.id = lb.config_id
		ORDER BY lb.conc, lb.offload_mode, c.disagg, wr.github_run_id, lb.benchmark_type, lb.isl, lb.recipe_fingerprint, lb.id`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (shown, error) {
		var s shown
		err := r.Scan(&s.Run, &s.Snapshot, &s.SnapshotDate, &s.Conc, &s.Offload, &s.Disagg)
		return s, err
	})
	require.NoError(t, err)
	return out
}

// qWholeRule is the reference's rule computed over the whole database, as
// its materialized view does on every refresh: ranked curve runs, chains
// of append-only runs, the newest contributor per point.
const qWholeRule = `(
WITH RECURSIVE ranked AS (
	SELECT r.*, row_number() OVER (PARTITION BY r.curve_scope
		ORDER BY r.date DESC, r.run_started_at DESC NULLS LAST, r.workflow_run_id DESC) AS run_rank
	FROM benchmark_curve_runs r
), chain AS (
	SELECT ranked.*, image AS root_image, date AS snapshot_date, workflow_run_id AS snapshot_workflow_run_id
	FROM ranked WHERE run_rank = 1
	UNION ALL
	SELECT o.*, c.root_image, c.snapshot_date, c.snapshot_workflow_run_id
	FROM chain c JOIN ranked o ON o.curve_scope = c.curve_scope AND o.run_rank = c.run_rank + 1
	WHERE c.append_only AND c.image_count = 1 AND c.images_complete
		AND o.image_count = 1 AND o.images_complete AND o.image = c.root_image
)
SELECT DISTINCT ON (br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode, br.recipe_fingerprint, br.conc)
	br.*, ch.snapshot_date, ch.snapshot_workflow_run_id
FROM chain ch
JOIN benchmark_results br ON br.workflow_run_id = ch.workflow_run_id
JOIN configs c ON c.id = br.config_id AND benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
	br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode) = ch.curve_scope
WHERE br.error IS NULL
ORDER BY br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode, br.recipe_fingerprint, br.conc, ch.run_rank
)`

// requireWholeRule: what the view shows, kept per curve, is what the rule
// computed over the whole database gives — row for row, snapshot included.
func requireWholeRule(t *testing.T, st *store.Store) []shown {
	t.Helper()
	got := shownRows(t, st.Pool(), "latest_benchmarks")
	require.Equal(t, shownRows(t, st.Pool(), qWholeRule), got)
	var extra int64
	require.NoError(t, st.Pool().QueryRow(context.Background(), `
		SELECT count(*) FROM (SELECT id, snapshot_date, snapshot_workflow_run_id FROM latest_benchmarks
			EXCEPT SELECT id, snapshot_date, snapshot_workflow_run_id FROM `+qWholeRule+` w) d`).Scan(&extra))
	require.Zero(t, extra, "the same benchmark rows, not only the same points")
	return got
}

func openCurveStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

func pts(base curvePoint, concs ...int) []curvePoint {
	out := make([]curvePoint, len(concs))
	for i, c := range concs {
		out[i] = base
		out[i].conc = c
	}
	return out
}

func rowsOfRun(run, snapshot int64, day int, concs ...int) []shown {
	out := make([]shown, len(concs))
	for i, c := range concs {
		out[i] = shown{Run: run, Snapshot: snapshot, SnapshotDate: fmt.Sprintf("2026-11-%02d", day), Conc: c, Offload: "off"}
	}
	return out
}

// TestCurvesAppendOnlyChains: an append-only run extends the curve of the
// run before it (same single image) instead of replacing it, through a
// chain of append-only runs; a re-measured point comes from the newest
// run of the chain; an image change or a full run ends the chain, and a
// full run truncates the curve to its own points. Every row carries the
// chain's snapshot.
func TestCurvesAppendOnlyChains(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	x := curvePoint{image: "trt:rc26"}
	steps := []struct {
		name string
		run  curveRun
		want []shown
	}{
		{"full run", curveRun{id: 100, day: 1, points: pts(x, 1, 2, 4)}, rowsOfRun(100, 100, 1, 1, 2, 4)},
		{"append-only run extends it", curveRun{id: 200, day: 2, appendOnly: true, points: pts(x, 8)},
			append(rowsOfRun(100, 200, 2, 1, 2, 4), rowsOfRun(200, 200, 2, 8)...)},
		{"a second append-only run re-measures conc 4", curveRun{id: 300, day: 3, appendOnly: true, points: pts(x, 4, 16)},
			[]shown{{100, 300, "2026-11-03", 1, "off", false}, {100, 300, "2026-11-03", 2, "off", false},
				{300, 300, "2026-11-03", 4, "off", false}, {200, 300, "2026-11-03", 8, "off", false},
				{300, 300, "2026-11-03", 16, "off", false}}},
		{"an append-only run on another image starts over", curveRun{id: 400, day: 4, appendOnly: true,
			points: pts(curvePoint{image: "trt:rc27"}, 32)}, rowsOfRun(400, 400, 4, 32)},
		{"a full run truncates the curve", curveRun{id: 500, day: 5, points: pts(curvePoint{image: "trt:rc27"}, 2)},
			rowsOfRun(500, 500, 5, 2)},
		{"an append-only run without an image extends nothing", curveRun{id: 600, day: 6, appendOnly: true, points: pts(curvePoint{}, 64)},
			rowsOfRun(600, 600, 6, 64)},
	}
	for _, s := range steps {
		v := curveIngest(t, st, s.run, "commit", nil)
		require.Equal(t, schema.RefreshRefreshed, v.Status, s.name)
		require.Equal(t, s.want, requireWholeRule(t, st), s.name)
	}
}

// TestCurvesAgentXScope: an AgentX curve ignores spec method, disagg and
// offload mode, so a newer AgentX run supersedes every topology and
// offload variant; a fixed-sequence curve keeps them apart. Points of
// several variants in one run all stay.
func TestCurvesAgentXScope(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	agg := curvePoint{agentic: true, spec: "mtp", offload: "off", image: "trt:rc22"}
	fixedAgg := curvePoint{spec: "mtp", offload: "off", image: "trt:rc22"}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: append(pts(agg, 1), pts(fixedAgg, 1)...)}, "commit", nil)
	disagg := curvePoint{agentic: true, spec: "none", disagg: true, prefill: 4, offload: "on", image: "trt:rc26"}
	fixedDisagg := curvePoint{spec: "none", disagg: true, prefill: 4, offload: "on", image: "trt:rc26"}
	curveIngest(t, st, curveRun{id: 200, day: 2, points: append(pts(disagg, 20, 30), pts(fixedDisagg, 20)...)}, "commit", nil)
	got := requireWholeRule(t, st)
	require.Equal(t, []shown{
		{100, 100, "2026-11-01", 1, "off", false}, // fixed-seq aggregated: its own curve
		{200, 200, "2026-11-02", 20, "on", true},  // AgentX: the disagg/offload run replaced the aggregated one
		{200, 200, "2026-11-02", 20, "on", true},  // fixed-seq disagg
		{200, 200, "2026-11-02", 30, "on", true},
	}, got)
	// One sweep with both variants of an AgentX curve keeps both.
	curveIngest(t, st, curveRun{id: 300, day: 3, points: append(pts(agg, 2), pts(disagg, 40)...)}, "commit", nil)
	require.Equal(t, []shown{
		{100, 100, "2026-11-01", 1, "off", false},
		{300, 300, "2026-11-03", 2, "off", false},
		{200, 200, "2026-11-02", 20, "on", true},
		{300, 300, "2026-11-03", 40, "on", true},
	}, requireWholeRule(t, st))
}

// TestCurvesColumnsAndPower: latest_benchmarks has the reference's columns
// — benchmark_results' own, then snapshot_date and
// snapshot_workflow_run_id, then kv_transfer_lib (the site reads it by
// name) — with their types, and shows a row's power provenance as stored.
func TestCurvesColumnsAndPower(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	curveIngest(t, st, curveRun{id: 100, day: 1, points: []curvePoint{{conc: 1, image: "i", power: true}, {conc: 2, image: "i"}}}, "commit", nil)
	rows, err := st.Pool().Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'latest_benchmarks'::regclass AND attnum > 0 ORDER BY attnum`)
	require.NoError(t, err)
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var n, ty string
		err := r.Scan(&n, &ty)
		return n + " " + ty, err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"id bigint", "workflow_run_id bigint", "config_id integer", "benchmark_type text", "date date",
		"isl integer", "osl integer", "conc integer", "image text", "metrics jsonb", "error text", "server_log_id bigint",
		"workers jsonb", "offload_mode text", "trace_replay_id bigint", "recipe_fingerprint text",
		"power_invalid_reasons jsonb", "power_audit jsonb", "snapshot_date date", "snapshot_workflow_run_id bigint", "kv_transfer_lib text"}, cols)

	var reasons, audit *string
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT power_invalid_reasons::text, power_audit::text FROM latest_benchmarks WHERE conc = 1`).
		Scan(&reasons, &audit))
	require.Equal(t, `["sampling_gap_exceeded"]`, *reasons)
	require.Equal(t, `{"expected_gpu_count": 16}`, *audit)
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT power_invalid_reasons::text, power_audit::text FROM latest_benchmarks WHERE conc = 2`).
		Scan(&reasons, &audit))
	require.Nil(t, reasons)
	require.Nil(t, audit)

	// The reference's function, as the site calls it.
	var scope string
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT benchmark_curve_scope('glm5.2', 'gb300', 'dynamo-trt', 'fp4',
		'agentic_traces', NULL, NULL, 'mtp', true, 'on')::text`).Scan(&scope))
	require.Equal(t, `["glm5.2", "gb300", "dynamo-trt", "fp4", "agentic_traces", null, null, "", false, ""]`, scope)
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT benchmark_curve_scope('glm5.2', 'gb300', 'dynamo-trt', 'fp4',
		'single_turn', 1024, 1024, 'mtp', true, NULL)::text`).Scan(&scope))
	require.Equal(t, `["glm5.2", "gb300", "dynamo-trt", "fp4", "single_turn", 1024, 1024, "mtp", true, "off"]`, scope)
}

// pointVersions are the row versions of latest_benchmark_points: a write
// of any row changes them.
func pointVersions(t *testing.T, st *store.Store) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT result_id || ':' || xmin::text FROM latest_benchmark_points ORDER BY 1`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// TestCurvesRerunRollbackDryRun: a rerun changes nothing and writes
// nothing (skipped); a rolled-back or dry-run ingest leaves the view as it
// was, though inside its transaction the view showed the run; a new
// attempt hides the older attempt's rows.
func TestCurvesRerunRollbackDryRun(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	x := curvePoint{image: "i"}
	first := curveRun{id: 100, day: 1, points: pts(x, 1, 2)}
	curveIngest(t, st, first, "commit", nil)
	before := requireWholeRule(t, st)
	versions := pointVersions(t, st)

	v := curveIngest(t, st, first, "commit", nil)
	require.Equal(t, schema.RefreshSkipped, v.Status)
	require.Equal(t, versions, pointVersions(t, st), "a rerun writes no row of the view")

	newer := curveRun{id: 200, day: 2, points: pts(x, 4)}
	for _, finish := range []string{"rollback", "dry-run"} {
		v := curveIngest(t, st, newer, finish, func(tx *store.RunTx) {
			// Inside the transaction the view already shows the run.
			var n int64
			require.NoError(t, st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM latest_benchmarks`).Scan(&n))
			require.EqualValues(t, 2, n, "others keep seeing the committed rows")
		})
		require.Equal(t, schema.RefreshRefreshed, v.Status, finish)
		require.Equal(t, before, requireWholeRule(t, st), finish)
		require.Equal(t, versions, pointVersions(t, st), finish)
		require.Zero(t, count(t, st, "materialized_view_marks"), finish)
	}

	// Attempt 2 of run 100 measured conc 8 only: attempt 1's rows are hidden.
	v = curveIngest(t, st, curveRun{id: 100, attempt: 2, day: 1, points: pts(x, 8)}, "commit", nil)
	require.Equal(t, int64(1), v.Curves)
	require.Equal(t, []shown{{100, 100, "2026-11-01", 8, "off", false}}, requireWholeRule(t, st))
}

// TestCurveImpact: inside the run's transaction the store tells which
// curves the run touched and what each showed before and shows after.
func TestCurveImpact(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	x := curvePoint{image: "i"}
	other := curvePoint{image: "i", isl: 8192}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: append(pts(x, 1, 2), pts(other, 1)...)}, "commit", nil)
	var impact []schema.CurveImpact
	v := curveIngest(t, st, curveRun{id: 200, day: 2, appendOnly: true, points: pts(x, 4)}, "commit", func(tx *store.RunTx) {
		var err error
		impact, err = tx.CurveImpact(context.Background())
		require.NoError(t, err)
	})
	require.Equal(t, schema.ViewRefresh{View: "latest_benchmarks", Status: schema.RefreshRefreshed, Changes: v.Changes,
		DurationMS: v.DurationMS, Curves: 1, Added: 1, Moved: 2}, v)
	require.Len(t, impact, 1, "the 8k/1k curve is not touched")
	c := impact[0]
	require.Equal(t, `["glm5.2", "gb300", "dynamo-trt", "fp4", "single_turn", 1024, 1024, "none", false, "off"]`, c.Scope)
	conc := func(ps []schema.CurvePoint) (out []string) {
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%d@%d/%d %s", p.Conc, p.WorkflowRunID, p.SnapshotWorkflowRunID, p.SnapshotDate))
		}
		return out
	}
	var run100, run200 int64
	require.NoError(t, st.Pool().QueryRow(context.Background(), `SELECT
		(SELECT id FROM workflow_runs WHERE github_run_id = 100), (SELECT id FROM workflow_runs WHERE github_run_id = 200)`).
		Scan(&run100, &run200))
	require.Equal(t, []string{fmt.Sprintf("1@%d/%d 2026-11-01", run100, run100), fmt.Sprintf("2@%d/%d 2026-11-01", run100, run100)},
		conc(c.Before))
	require.Equal(t, []string{fmt.Sprintf("1@%d/%d 2026-11-02", run100, run200), fmt.Sprintf("2@%d/%d 2026-11-02", run100, run200),
		fmt.Sprintf("4@%d/%d 2026-11-02", run200, run200)}, conc(c.After))
	require.Equal(t, "off", c.After[2].OffloadMode)
	require.Equal(t, 1024, *c.After[2].ISL)
	// The GitHub runs of a point's row and snapshot, and its config's arm.
	for _, p := range c.After {
		require.Equal(t, int64(200), p.SnapshotGitHubRunID)
		require.Equal(t, 1, p.RunAttempt)
		require.Equal(t, schema.Config{SpecMethod: "none", PrefillTP: 8, PrefillEP: 1, DecodeTP: 8, DecodeEP: 1,
			NumPrefillGPU: 8, NumDecodeGPU: 8}, p.Config)
	}
	require.Equal(t, []int64{100, 100, 200}, []int64{c.After[0].GitHubRunID, c.After[1].GitHubRunID, c.After[2].GitHubRunID})
	require.Equal(t, int64(100), c.Before[0].SnapshotGitHubRunID)
}

// TestCurvesHandWrittenChanges: a change another writer commits (an error
// set by hand) marks the view stale; the refresh applies it to the curves
// of that run only, and a forced refresh recomputes everything to the same
// rows.
func TestCurvesHandWrittenChanges(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	x := curvePoint{image: "i"}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: pts(x, 1, 2)}, "commit", nil)
	curveIngest(t, st, curveRun{id: 200, day: 2, points: pts(x, 4)}, "commit", nil)
	_, err := st.Pool().Exec(ctx, `UPDATE benchmark_results SET error = 'oom' WHERE conc = 4`)
	require.NoError(t, err)
	state, ok, err := st.LatestBenchmarksState(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, state.Stale)
	// A metrics update moves no row: no mark.
	_, err = st.Pool().Exec(ctx, `UPDATE benchmark_results SET metrics = metrics || '{"x": 1}' WHERE conc = 1`)
	require.NoError(t, err)
	require.EqualValues(t, 1, count(t, st, "materialized_view_marks"))

	r, err := st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshRefreshed, r.Status)
	require.Equal(t, int64(1), r.Curves)
	require.Equal(t, rowsOfRun(100, 100, 1, 1, 2), requireWholeRule(t, st), "the errored run no longer wins the curve")
	state, _, err = st.LatestBenchmarksState(ctx)
	require.NoError(t, err)
	require.False(t, state.Stale)
	require.EqualValues(t, 2, state.Rows)

	versions := pointVersions(t, st)
	r, err = st.RefreshLatestBenchmarks(ctx, true)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshRefreshed, r.Status)
	require.Equal(t, versions, pointVersions(t, st), "a forced refresh of an up-to-date view writes nothing")
	r, err = st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshSkipped, r.Status)
}

// TestCurvesRandomHistory: runs of random dates, start times, images,
// append-only flags, attempts, topologies, offload modes, recipes and
// errors, ingested in a random order: after each, the view kept per curve
// equals the rule computed over the whole database.
func TestCurvesRandomHistory(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	rng := rand.New(rand.NewPCG(24, 13))
	images := []string{"a", "a", "a", "b", ""}
	var runs []curveRun
	for i := range 40 {
		r := curveRun{id: int64(1000 + rng.IntN(30)), day: 1 + rng.IntN(6), hour: 1 + rng.IntN(3), appendOnly: rng.IntN(2) == 0}
		if rng.IntN(5) == 0 {
			r.attempt = 2
		}
		image := images[rng.IntN(len(images))]
		seen := map[string]bool{}
		for range 1 + rng.IntN(5) {
			p := curvePoint{agentic: rng.IntN(2) == 0, disagg: rng.IntN(3) == 0, offload: []string{"on", "off"}[rng.IntN(2)],
				isl: []int{1024, 8192}[rng.IntN(2)], conc: []int{1, 2, 4, 8}[rng.IntN(4)], image: image}
			if rng.IntN(4) == 0 {
				p.image = images[rng.IntN(len(images))] // a run of mixed images
			}
			if rng.IntN(4) == 0 {
				p.recipe = "r1"
			}
			if rng.IntN(10) == 0 {
				p.errorMsg = "failed"
			}
			key := fmt.Sprint(p.agentic, p.disagg, p.offload, p.isl, p.conc, p.recipe)
			if seen[key] {
				continue
			}
			seen[key] = true
			r.points = append(r.points, p)
		}
		runs = append(runs, r)
		_ = i
	}
	for i, r := range runs {
		curveIngest(t, st, r, "commit", nil)
		if slices.ContainsFunc(r.points, func(p curvePoint) bool { return p.errorMsg != "" }) {
			_, err := st.RefreshLatestBenchmarks(context.Background(), false)
			require.NoError(t, err)
		}
		requireWholeRule(t, st)
		require.Zero(t, count(t, st, "materialized_view_marks"), "run %d", i)
	}
	require.Greater(t, count(t, st, "latest_benchmark_points"), int64(10))
}

// TestCurvesMigrationBuild: migration 000013 builds the per-curve tables
// from the rows already stored (here: what 000006's view held is rebuilt
// by the rule), and down and up again lands on the same rows.
func TestCurvesMigrationBuild(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	x := curvePoint{image: "i"}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: pts(x, 1, 2, 4)}, "commit", nil)
	curveIngest(t, st, curveRun{id: 200, day: 2, appendOnly: true, points: pts(x, 8)}, "commit", nil)
	curveIngest(t, st, curveRun{id: 300, day: 3, points: pts(curvePoint{agentic: true, image: "i"}, 1)}, "commit", nil)
	want := requireWholeRule(t, st)
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.NoError(t, st.MigrateDown(ctx, int(latest)-12))
	_, _, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	require.Equal(t, want, requireWholeRule(t, st))
	r, err := st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, schema.RefreshRefreshed, r.Status, "the marks left by the way down are applied")
	require.Equal(t, want, requireWholeRule(t, st))
}

// TestCurveImpactKeptValues: the impact reads a replaced point's values
// from latest_benchmark_points (migration 000021), which an update of the
// row in place keeps current (an override's new metrics between two
// runs); a deleted row leaves the curve at the next refresh.
func TestCurveImpactKeptValues(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	x := curvePoint{image: "i"}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: pts(x, 1, 2, 3)}, "commit", nil)
	kept := func() []string {
		var out []string
		rows, err := st.Pool().Query(ctx, `SELECT conc || ':' || coalesce(tput_per_gpu::text, '-') || ':' || coalesce(median_ttft::text, '-')
			FROM latest_benchmark_points ORDER BY conc`)
		require.NoError(t, err)
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, []string{"1:100:-", "2:100.1:-", "3:100.2:-"}, kept())
	// Between the runs: new metrics for conc 1, a non-number for conc 2, conc 3 deleted.
	_, err := st.Pool().Exec(ctx, `UPDATE benchmark_results SET metrics = CASE conc
		WHEN 1 THEN metrics || '{"tput_per_gpu": 77.5, "median_ttft": 0.25}'
		ELSE metrics || '{"tput_per_gpu": "n/a"}' END WHERE conc IN (1, 2)`)
	require.NoError(t, err)
	require.Equal(t, []string{"1:77.5:0.25", "2:-:-", "3:100.2:-"}, kept())
	_, err = st.Pool().Exec(ctx, `DELETE FROM benchmark_results WHERE conc = 3`)
	require.NoError(t, err)
	var deleted []int
	rows, err := st.Pool().Query(ctx, `SELECT conc FROM latest_benchmark_points WHERE result_deleted ORDER BY conc`)
	require.NoError(t, err)
	for rows.Next() {
		var c int
		require.NoError(t, rows.Scan(&c))
		deleted = append(deleted, c)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int{3}, deleted, "the delete trigger marks the point (migration 000022)")
	_, err = st.RefreshLatestBenchmarks(ctx, false)
	require.NoError(t, err)
	require.Equal(t, []string{"1:77.5:0.25", "2:-:-"}, kept())

	var impact []schema.CurveImpact
	curveIngest(t, st, curveRun{id: 200, day: 2, points: pts(x, 1, 2, 4)}, "commit", func(tx *store.RunTx) {
		impact, err = tx.CurveImpact(ctx)
		require.NoError(t, err)
	})
	require.Len(t, impact, 1)
	before, after := impact[0].Before, impact[0].After
	require.Len(t, before, 2)
	require.Equal(t, 1, before[0].Conc)
	require.Equal(t, 77.5, *before[0].Values.TputPerGPU)
	require.Equal(t, 0.25, *before[0].Values.MedianTTFT)
	require.Nil(t, before[1].Values.TputPerGPU, "a non-number is no value")
	require.Len(t, after, 3)
	require.Equal(t, 200.0, *after[0].Values.TputPerGPU, "the new run's own values")
	require.Equal(t, []string{"1:200:-", "2:200.1:-", "4:200.2:-"}, kept())
}

// TestCurvePointValuesMigration: migrations 000021 and 000022 fill the kept
// values of the points already shown from their rows, and mark those whose
// row is gone; their down migrations drop them.
func TestCurvePointValuesMigration(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	x := curvePoint{image: "i"}
	curveIngest(t, st, curveRun{id: 100, day: 1, points: pts(x, 1, 2)}, "commit", nil)
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.NoError(t, st.MigrateDown(ctx, int(latest)-20)) // to 000020
	var cols int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_name = 'latest_benchmark_points' AND column_name = 'tput_per_gpu'`).Scan(&cols))
	require.Zero(t, cols)
	_, _, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	var got []string
	// A row deleted while the schema had no delete trigger (before 000022).
	require.NoError(t, st.MigrateDown(ctx, int(latest)-21)) // to 000021
	_, err = st.Pool().Exec(ctx, `SET session_replication_role = replica; DELETE FROM benchmark_results WHERE conc = 2;
		SET session_replication_role = DEFAULT`)
	require.NoError(t, err)
	_, _, err = st.MigrateUp(ctx)
	require.NoError(t, err)
	rows, err := st.Pool().Query(ctx, `SELECT p.conc || ':' || coalesce(p.tput_per_gpu::text, '-') || ':' ||
		coalesce((p.workflow_run_id = b.workflow_run_id)::text, '-') || ':' || p.result_deleted
		FROM latest_benchmark_points p LEFT JOIN benchmark_results b ON b.id = p.result_id ORDER BY p.conc`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"1:100:true:false", "2:100.1:-:true"}, got)
}

// TestCurvePointValuesTakenAtInsert: the five values the curve update
// keeps of a new row are those the stager read from the metrics it wrote
// (no read of the stored jsonb), and equal, to the bit, to what
// benchmark_impact_values reads from that jsonb; a row rewritten later in
// the transaction, and a row whose metrics hold a type the stager leaves
// to the database, have theirs read from the row as it ends up.
func TestCurvePointValuesTakenAtInsert(t *testing.T) {
	t.Parallel()
	st := openCurveStore(t)
	ctx := context.Background()
	tenth, fifth := 0.1, 0.2 // summed at run time: 0.30000000000000004
	metrics := []map[string]any{
		{"tput_per_gpu": 1.5, "output_tput_per_gpu": math.Copysign(0, -1), "median_intvty": 3e21,
			"p90_e2el": 5e-324, "median_ttft": tenth + fifth},
		{"tput_per_gpu": math.MaxFloat64, "output_tput_per_gpu": -1.0 / 3, "median_intvty": 123456789.123456789,
			"p90_e2el": "n/a", "median_ttft": map[string]any{"p50": 1.0}},
		{"tput_per_gpu": math.NaN(), "median_ttft": true},
		{"tput_per_gpu": 2.5, "median_ttft": 7},                    // an int: left to the database
		{"tput_per_gpu": json.Number("12.50"), "p90_e2el": 1e-300}, // likewise
		{"tput_per_gpu": 4.25, "median_ttft": 0.5},                 // rewritten after the insert
	}
	r := curveRun{id: 300, day: 3}
	tx, err := st.BeginRun(ctx, r.start())
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	rows := make([]schema.StagedBenchmark, len(metrics))
	for i, m := range metrics {
		p := curvePoint{image: "i", conc: i + 1}.point(0)
		p.Metrics = m
		rows[i] = schema.StagedBenchmark{Point: p, Source: schema.Provenance{Artifact: "bmk", File: fmt.Sprintf("r%d.json", i)}}
	}
	win := benchmarks.NewWinners()
	_, err = tx.StageBenchmarks(ctx, iterate(rows), win.Add)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
	require.NoError(t, err)
	kept, err := tx.QueryIntInRun(ctx, `SELECT count(*) FROM written_point_values`)
	require.NoError(t, err)
	require.Equal(t, int64(4), kept, "the rows whose values the stager could read")
	require.NoError(t, tx.ExecInRun(ctx, `UPDATE benchmark_results SET metrics = metrics || '{"tput_per_gpu": 99.75}' WHERE conc = 6`))
	_, err = tx.UpdateLatestBenchmarks(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))

	type pair struct {
		Conc        int
		Kept, Fresh string
	}
	var got []pair
	q, err := st.Pool().Query(ctx, `SELECT b.conc,
			row(p.tput_per_gpu, p.output_tput_per_gpu, p.median_intvty, p.p90_e2el, p.median_ttft)::text,
			row(v.tput_per_gpu, v.output_tput_per_gpu, v.median_intvty, v.p90_e2el, v.median_ttft)::text
		FROM latest_benchmark_points p JOIN benchmark_results b ON b.id = p.result_id
		LEFT JOIN LATERAL benchmark_impact_values(b.metrics) v ON true ORDER BY b.conc`)
	require.NoError(t, err)
	for q.Next() {
		var g pair
		require.NoError(t, q.Scan(&g.Conc, &g.Kept, &g.Fresh))
		got = append(got, g)
	}
	require.NoError(t, q.Err())
	require.Len(t, got, len(metrics))
	for _, g := range got {
		require.Equal(t, g.Fresh, g.Kept, "conc %d: the kept values are the stored document's, to the bit", g.Conc)
	}
	require.Equal(t, "(1.5,0,3e+21,5e-324,0.30000000000000004)", got[0].Kept)
	require.Equal(t, "(1.7976931348623157e+308,-0.3333333333333333,123456789.12345679,,)", got[1].Kept)
	require.Equal(t, "(,,,,)", got[2].Kept)
	require.Equal(t, "(2.5,,,,7)", got[3].Kept)
	require.Equal(t, "(12.5,,,1e-300,)", got[4].Kept)
	require.Equal(t, "(99.75,,,,0.5)", got[5].Kept, "the row as the transaction left it")
}
