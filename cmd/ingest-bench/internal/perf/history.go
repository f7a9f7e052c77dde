package perf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/gctarget"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// HistoryConfig is the history bench: how a first ingest, its update of
// latest_benchmarks and the dashboard's reads grow with the runs already
// stored.
type HistoryConfig struct {
	// Gen is the measured run; every stored run has its points (the same
	// seed), so their curves overlap it entirely, dated a day apart, all
	// before it.
	Gen generate.Options
	// Levels are the numbers of runs stored before the measured ingest
	// (0 is an empty database).
	Levels []int
	// Repeat is how many times each level is measured, the levels taking
	// turns.
	Repeat   int
	AdminURL string
	// DatabasePrefix is as Config's.
	DatabasePrefix string
	Keep           bool
	Dir            string
	Log            *zap.Logger
	GC             *gctarget.Target
}

// HistoryResult is what the history bench measured.
type HistoryResult struct {
	Config HistoryConfig
	Points int // points of the measured run
	Levels []HistoryLevel
	// Problems are the checks that failed (a report that is not what the
	// generator designed, a view that does not show the run).
	Problems []string
}

// HistoryLevel is one level's measurements, one per repeat.
type HistoryLevel struct {
	Runs int
	// Fill is how long storing the runs took (once per level, not a figure
	// of the ingest); Rows the benchmark rows they hold.
	Fill time.Duration
	Rows int64
	// Ingest is the measured first ingest (ingest.Run: the tree opened,
	// every stage, the commit); Curves its update of latest_benchmarks in
	// its transaction (stage "curves"); Impact the impact section computed
	// from it (stage "impact"); Refresh the refresh after its commit
	// (RefreshAfterIngest: normally nothing pending).
	Ingest, Curves, Impact, Refresh []time.Duration
	// MainRead and HistoryRead are the dashboard's latest chart and
	// history reads for the run's models after the ingest (median of five
	// each); their row counts.
	MainRead, HistoryRead []time.Duration
	MainRows, HistoryRows int
}

// qMainRead is the dashboard's main chart read (getLatestBenchmarks without
// a date, its newest version): the rows of latest_benchmarks of the given
// models with their configs, the run of each row and the run of its
// snapshot.
const qMainRead = `
SELECT lb.id, c.hardware, c.framework, c.model, c.precision, c.spec_method, c.disagg, c.is_multinode,
	c.prefill_tp, c.prefill_ep, c.prefill_dp_attention, c.prefill_num_workers,
	c.decode_tp, c.decode_ep, c.decode_dp_attention, c.decode_num_workers, c.num_prefill_gpu, c.num_decode_gpu,
	lb.benchmark_type, lb.offload_mode, lb.isl, lb.osl, lb.conc, lb.image, lb.recipe_fingerprint, lb.metrics, lb.workers,
	lb.date::text, lb.workflow_run_id, wr.run_started_at::text,
	CASE WHEN wr.html_url IS NOT NULL THEN wr.html_url || '/attempts/' || wr.run_attempt END AS run_url,
	lb.snapshot_date::text, lb.snapshot_workflow_run_id, sw.run_started_at::text
FROM latest_benchmarks lb
JOIN configs c ON c.id = lb.config_id
JOIN latest_workflow_runs wr ON wr.id = lb.workflow_run_id
JOIN latest_workflow_runs sw ON sw.id = lb.snapshot_workflow_run_id
WHERE c.model = ANY($1)
ORDER BY lb.config_id, lb.conc, lb.isl, lb.osl, lb.date DESC`

// qHistoryRead is the dashboard's history read (getAllBenchmarksForHistory,
// its newest version) for the given models and sequence: every curve
// snapshot across time — each run of a curve with the runs an append-only
// run extends — one row per point and snapshot.
const qHistoryRead = `
WITH RECURSIVE ranked AS (
	SELECT r.*, row_number() OVER (PARTITION BY r.curve_scope
		ORDER BY r.date DESC, r.run_started_at DESC NULLS LAST, r.workflow_run_id DESC) AS run_rank
	FROM (
		SELECT benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision, br.benchmark_type, br.isl, br.osl,
				c.spec_method, c.disagg, br.offload_mode) AS curve_scope,
			br.workflow_run_id, br.date, wr.run_started_at, wr.append_only,
			min(br.image) AS image, count(DISTINCT br.image) AS image_count, bool_and(br.image IS NOT NULL) AS images_complete
		FROM benchmark_results br
		JOIN configs c ON c.id = br.config_id
		JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
		WHERE c.model = ANY($1) AND br.isl = $2 AND br.osl = $3 AND br.error IS NULL
		GROUP BY 1, 2, 3, 4, 5
	) r
), chain AS (
	SELECT ranked.*, image AS root_image, date AS snapshot_date, workflow_run_id AS snapshot_workflow_run_id FROM ranked
	UNION ALL
	SELECT o.*, c.root_image, c.snapshot_date, c.snapshot_workflow_run_id
	FROM chain c JOIN ranked o ON o.curve_scope = c.curve_scope AND o.run_rank = c.run_rank + 1
	WHERE c.append_only AND c.image_count = 1 AND c.images_complete
		AND o.image_count = 1 AND o.images_complete AND o.image = c.root_image
), points AS (
	SELECT DISTINCT ON (ch.snapshot_workflow_run_id, br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode,
			br.recipe_fingerprint, br.conc)
		br.*, ch.snapshot_date, ch.snapshot_workflow_run_id
	FROM chain ch
	JOIN benchmark_results br ON br.workflow_run_id = ch.workflow_run_id
	JOIN configs c ON c.id = br.config_id AND benchmark_curve_scope(c.model, c.hardware, c.framework, c.precision,
		br.benchmark_type, br.isl, br.osl, c.spec_method, c.disagg, br.offload_mode) = ch.curve_scope
	WHERE br.error IS NULL
	ORDER BY ch.snapshot_workflow_run_id, br.config_id, br.benchmark_type, br.isl, br.osl, br.offload_mode,
		br.recipe_fingerprint, br.conc, ch.run_rank
)
SELECT br.id, c.hardware, c.framework, c.model, c.precision, c.spec_method, c.disagg, br.conc,
	br.metrics - '{std_ttft,std_tpot,std_e2el,std_intvty,std_itl,mean_ttft,mean_tpot,mean_e2el,mean_intvty,mean_itl}'::text[] AS metrics,
	br.workers, br.date::text, br.workflow_run_id, wr.run_started_at::text,
	br.snapshot_date::text, br.snapshot_workflow_run_id, sw.run_started_at::text
FROM points br
JOIN configs c ON c.id = br.config_id
JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
JOIN latest_workflow_runs sw ON sw.id = br.snapshot_workflow_run_id
ORDER BY br.snapshot_date, c.id, br.conc`

// qHistoryShift dates the stored template run ($1) $2 days before the
// measured run; qHistoryRuns adds $2 - 1 runs after it, a day apart, under
// the GitHub run ids below it; qHistoryRows gives them its rows.
const (
	qHistoryShift = `
WITH r AS (
	UPDATE workflow_runs SET date = date - $2::int, created_at = created_at - $2::int * interval '1 day',
		run_started_at = run_started_at - $2::int * interval '1 day'
	WHERE id = $1
)
UPDATE benchmark_results SET date = date - $2::int WHERE workflow_run_id = $1`
	qHistoryRuns = `
INSERT INTO workflow_runs (repo, github_run_id, run_attempt, name, event, status, conclusion, head_sha, head_branch,
	html_url, created_at, run_started_at, date)
SELECT w.repo, w.github_run_id - g, w.run_attempt, w.name, w.event, w.status, w.conclusion, w.head_sha, w.head_branch,
	w.html_url, w.created_at + g * interval '1 day', w.run_started_at + g * interval '1 day', w.date + g
FROM workflow_runs w, generate_series(1, $2::int - 1) g
WHERE w.id = $1`
	qHistoryRows = `
INSERT INTO benchmark_results (workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, offload_mode,
	recipe_fingerprint, image, metrics, workers, power_invalid_reasons, power_audit, content_digest,
	source_artifact, source_artifact_id, source_file, source_row, ingest_id)
SELECT c.id, b.config_id, b.benchmark_type, c.date, b.isl, b.osl, b.conc, b.offload_mode,
	b.recipe_fingerprint, b.image, b.metrics, b.workers, b.power_invalid_reasons, b.power_audit, b.content_digest,
	b.source_artifact, b.source_artifact_id, b.source_file, b.source_row, b.ingest_id
FROM workflow_runs t
JOIN benchmark_results b ON b.workflow_run_id = t.id
JOIN workflow_runs c ON c.github_run_id < t.github_run_id AND c.github_run_id >= t.github_run_id - $2::int
WHERE t.id = $1`
	qHistoryAnalyze = `ANALYZE`
	qHistoryCount   = `SELECT count(*) FROM benchmark_results`
	// qHistorySequence is the run's models and most common sequence.
	qHistorySequence = `
SELECT (SELECT array_agg(DISTINCT c.model ORDER BY c.model) FROM configs c), b.isl, b.osl
FROM benchmark_results b WHERE b.isl IS NOT NULL GROUP BY b.isl, b.osl ORDER BY count(*) DESC LIMIT 1`
	// qHistoryShown counts the measured run's rows the view shows.
	qHistoryShown = `SELECT count(*) FROM latest_benchmarks lb JOIN workflow_runs w ON w.id = lb.workflow_run_id
WHERE w.github_run_id = $1`
)

// RunHistory runs the history bench: for each level, a template database
// holding that many stored runs is built once; each repeat then copies it
// (CREATE DATABASE … TEMPLATE), ingests the measured run into the copy as
// `ingest load` does, refreshes after the commit as `ingest load` does,
// and times the dashboard's reads.
func RunHistory(ctx context.Context, cfg HistoryConfig) (*HistoryResult, error) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.AdminURL == "" {
		cfg.AdminURL = DefaultAdminURL
	}
	if cfg.Repeat < 1 {
		cfg.Repeat = 1
	}
	res := &HistoryResult{Config: cfg}
	dir, err := os.MkdirTemp(cfg.Dir, "ingest-bench-history-")
	if err != nil {
		return nil, fmt.Errorf("trees directory: %w", err)
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	measured, template := cfg.Gen, cfg.Gen
	if measured.RunID == 0 {
		measured.RunID = generate.DefaultRunID
	}
	template.RunID = measured.RunID - 1
	mdir, tdir := filepath.Join(dir, "measured"), filepath.Join(dir, "template")
	m, err := generate.Write(mdir, measured)
	if err != nil {
		return nil, fmt.Errorf("generate the measured run: %w", err)
	}
	if _, err := generate.Write(tdir, template); err != nil {
		return nil, fmt.Errorf("generate the stored runs' template: %w", err)
	}
	res.Points = m.Points
	deps, err := loadDeps(cfg.Log)
	if err != nil {
		return nil, err
	}
	deps.LargeHeap = cfg.GC.LargeHeap

	suffix := randomSuffix()
	templates := make([]string, len(cfg.Levels))
	for i, n := range cfg.Levels {
		lv := HistoryLevel{Runs: n}
		templates[i] = fmt.Sprintf("%s%s_%d", databaseName(cfg.DatabasePrefix, "hist_"), suffix, n)
		began := time.Now()
		lv.Rows, err = fillHistory(ctx, cfg, deps, templates[i], tdir, n)
		if !cfg.Keep {
			defer dropBenchDatabase(ctx, cfg, templates[i])
		}
		if err != nil {
			return nil, fmt.Errorf("store %d runs: %w", n, err)
		}
		lv.Fill = time.Since(began)
		res.Levels = append(res.Levels, lv)
	}
	for rep := range cfg.Repeat {
		for i := range res.Levels {
			// The levels take turns, the order alternating per repeat.
			j := i
			if rep%2 == 1 {
				j = len(res.Levels) - 1 - i
			}
			name := fmt.Sprintf("%s%s_%d_r%d", databaseName(cfg.DatabasePrefix, "hist_"), suffix, res.Levels[j].Runs, rep)
			problems, err := measureHistory(ctx, cfg, deps, &res.Levels[j], templates[j], name, mdir, m, measured.RunID)
			if err != nil {
				return nil, err
			}
			res.Problems = append(res.Problems, problems...)
		}
	}
	return res, nil
}

func dropBenchDatabase(ctx context.Context, cfg HistoryConfig, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := dropDatabase(ctx, cfg.AdminURL, name); err != nil {
		cfg.Log.Warn("could not drop a bench database", zap.String("database", name), zap.Error(err))
	}
}

// fillHistory creates the template database of a level: migrated, and
// holding n runs with the template tree's rows (the first ingested, the
// others copied from it in SQL), latest_benchmarks up to date, analyzed
// as autovacuum would have analyzed it over n ingests. It returns the
// number of benchmark rows.
func fillHistory(ctx context.Context, cfg HistoryConfig, deps ingest.Deps, name, tdir string, n int) (int64, error) {
	url, err := createDatabase(ctx, cfg.AdminURL, name, "")
	if err != nil {
		return 0, err
	}
	st, err := store.Open(ctx, url, cfg.Log)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, _, err := st.MigrateUp(ctx); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	sum, err := ingestTree(ctx, cfg.Log, deps, name, tdir)
	if err != nil {
		return 0, fmt.Errorf("ingest the template run: %w", err)
	}
	var id int64
	if err := db.QueryRow(ctx, `SELECT workflow_run_id FROM ingests WHERE id = $1`, sum.IngestID).Scan(&id); err != nil {
		return 0, fmt.Errorf("find the template run: %w", err)
	}
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, q := range []string{qHistoryShift, qHistoryRuns, qHistoryRows} {
			if _, err := tx.Exec(ctx, q, id, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("copy the template run: %w", err)
	}
	if _, err := db.Exec(ctx, qHistoryAnalyze); err != nil {
		return 0, err
	}
	if _, err := st.RefreshLatestBenchmarks(ctx, false); err != nil {
		return 0, err
	}
	if _, err := db.Exec(ctx, qHistoryAnalyze); err != nil {
		return 0, err
	}
	var rows int64
	err = db.QueryRow(ctx, qHistoryCount).Scan(&rows)
	return rows, err
}

// measureHistory copies a level's template database, ingests the measured
// run into the copy and times the dashboard's reads.
func measureHistory(ctx context.Context, cfg HistoryConfig, deps ingest.Deps, lv *HistoryLevel, template, name, mdir string,
	m generate.Manifest, runID int64) ([]string, error) {
	url, err := createDatabase(ctx, cfg.AdminURL, name, template)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer dropBenchDatabase(ctx, cfg, name)
	}
	st, err := store.Open(ctx, url, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var curves, impact time.Duration
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	deps.Log = withStageTimes(deps.Log, func(stage string, took time.Duration) {
		switch stage {
		case "curves":
			curves = took
		case "impact":
			impact = took
		}
	})
	began := time.Now()
	sum, err := ingestTree(ctx, cfg.Log, deps, name, mdir)
	took := time.Since(began)
	if err != nil {
		return nil, fmt.Errorf("ingest the measured run: %w", err)
	}
	began = time.Now()
	ingest.RefreshAfterIngest(ctx, st, sum, cfg.Log)
	refresh := time.Since(began)
	var problems []string
	for _, c := range check(sum, m, false) {
		problems = append(problems, fmt.Sprintf("%d stored runs: %s", lv.Runs, c))
	}
	if v := sum.Details.LatestBenchmarks; v == nil || v.Status != schema.RefreshRefreshed {
		problems = append(problems, fmt.Sprintf("%d stored runs: latest_benchmarks was not updated by the ingest: %+v", lv.Runs, v))
	}
	var shown int64
	if err := db.QueryRow(ctx, qHistoryShown, runID).Scan(&shown); err != nil {
		return nil, err
	}
	if shown != int64(m.Points) {
		problems = append(problems, fmt.Sprintf("%d stored runs: latest_benchmarks shows %d rows of the run, want %d", lv.Runs, shown, m.Points))
	}
	var models []string
	var isl, osl int32
	if err := db.QueryRow(ctx, qHistorySequence).Scan(&models, &isl, &osl); err != nil {
		return nil, fmt.Errorf("find the run's models: %w", err)
	}
	main, mainRows, err := timeRead(ctx, db, qMainRead, models)
	if err != nil {
		return nil, fmt.Errorf("main read: %w", err)
	}
	hist, histRows, err := timeRead(ctx, db, qHistoryRead, models, isl, osl)
	if err != nil {
		return nil, fmt.Errorf("history read: %w", err)
	}
	lv.Ingest, lv.Curves, lv.Refresh = append(lv.Ingest, took), append(lv.Curves, curves), append(lv.Refresh, refresh)
	lv.Impact = append(lv.Impact, impact)
	lv.MainRead, lv.HistoryRead = append(lv.MainRead, main), append(lv.HistoryRead, hist)
	lv.MainRows, lv.HistoryRows = mainRows, histRows
	return problems, nil
}

// timeRead runs a read once to warm up, then five times, and returns the
// median time and the rows it returned.
func timeRead(ctx context.Context, db *pgxpool.Pool, q string, args ...any) (time.Duration, int, error) {
	var times []time.Duration
	rows := 0
	for i := range 6 {
		began := time.Now()
		r, err := db.Query(ctx, q, args...)
		if err != nil {
			return 0, 0, err
		}
		n := 0
		for r.Next() {
			n++
		}
		r.Close()
		if err := r.Err(); err != nil {
			return 0, 0, err
		}
		if i > 0 {
			times = append(times, time.Since(began))
		}
		rows = n
	}
	slices.Sort(times)
	return times[len(times)/2], rows, nil
}
