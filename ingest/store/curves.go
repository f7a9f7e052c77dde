package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// latest_benchmarks is kept per curve (migration 000013): a transaction
// that changed benchmark rows or runs finds its change marks (inserted by
// triggers, naming the runs) and recomputes the curves those runs are on,
// and only those, before it commits. A refresh does the same for the
// marks other writers committed (a statement run by hand), or for every
// run with force.

// curveOutcome is what one update of the curves did.
type curveOutcome struct {
	marks, curves, added, removed, moved int64
}

// updateCurves takes the change marks — every committed one (all), else
// the transaction's own — and recomputes the curves of their runs, every
// run with force, in one round trip. The caller holds tx; a failed update
// may leave it unusable (the ingest wraps it in a savepoint).
func updateCurves(ctx context.Context, tx pgx.Tx, all, force bool, explain func(string, error) error) (curveOutcome, error) {
	var o curveOutcome
	// The statements of a batch are prepared before the first runs: the
	// scratch tables are created, and the marks taken, in a batch of their
	// own.
	b := &pgx.Batch{}
	for _, q := range qCurveScratch {
		b.Queue(q)
	}
	b.Queue(qCurveTakeMarks, all, force)
	res := tx.SendBatch(ctx, b)
	for range qCurveScratch {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return o, explain("latest_benchmarks: create the scratch tables", err)
		}
	}
	var runs []int64
	if err := res.QueryRow().Scan(&o.marks, &runs); err != nil {
		res.Close()
		return o, explain("latest_benchmarks: take the change marks", err)
	}
	if err := res.Close(); err != nil {
		return o, explain("latest_benchmarks: take the change marks", err)
	}
	b = &pgx.Batch{}
	for _, s := range curveSteps {
		if s.runs {
			b.Queue(s.sql, runs)
		} else {
			b.Queue(s.sql)
		}
	}
	b.Queue(qCurveApply)
	res = tx.SendBatch(ctx, b)
	defer res.Close()
	for _, s := range curveSteps {
		if _, err := res.Exec(); err != nil {
			return o, explain("latest_benchmarks: "+s.what, err)
		}
	}
	var kept int64
	if err := res.QueryRow().Scan(&o.curves, &o.added, &o.removed, &o.moved, &kept); err != nil {
		return o, explain("latest_benchmarks: recompute the touched curves", err)
	}
	if err := res.Close(); err != nil {
		return o, explain("latest_benchmarks: update the curves", err)
	}
	return o, nil
}

// curveSteps run between taking the marks and recomputing the curves;
// runs: the statement takes the marked runs.
var curveSteps = []struct {
	sql, what string
	runs      bool
}{
	{qCurveNewLines, "compute the runs' curve lines", true},
	{qCurveTouched, "list the touched curves", true},
	{qCurveLock, "lock the touched curves", false},
	{qCurveAddCurves, "name new curves", false},
	{qCurveIDs, "look up the curves", false},
	{qCurveDropLines, "drop stale curve lines", true},
	{qCurveAddLines, "write curve lines", false},
	{qCurveAfter, "recompute the touched curves", false},
}

func (o curveOutcome) refresh(took time.Duration) schema.ViewRefresh {
	return schema.ViewRefresh{View: LatestBenchmarksView, Status: schema.RefreshRefreshed, Changes: o.marks,
		DurationMS: took.Milliseconds(), Curves: o.curves, Added: o.added, Removed: o.removed, Moved: o.moved}
}

// UpdateLatestBenchmarks brings latest_benchmarks up to date with what
// this transaction wrote, before it commits: the curves of the runs whose
// rows changed are recomputed (only those), and the view shows the run
// the moment it commits; a dry run rolls it back with the rest. Nothing
// changed: skipped. The update runs in a savepoint: when it fails, its
// work is undone, the transaction's change marks stay and commit with the
// run (the view is stale until the next refresh retries), and the outcome
// says failed. The error is returned only when the transaction itself is
// no longer usable.
//
// Call it once, after the run's last write; CurveImpact then tells what it
// did to each curve.
func (t *RunTx) UpdateLatestBenchmarks(ctx context.Context) (schema.ViewRefresh, error) {
	r, updated, err := updateOwnCurves(ctx, t.tx, t.log, t.explain)
	t.curvesUpdated = updated
	return r, err
}

// updateOwnCurves is UpdateLatestBenchmarks in transaction tx, for any
// writer of benchmark rows (a run's ingest, an apply of the run
// overrides); updated says whether curves were recomputed, so that
// curveImpact can read the scratch tables.
func updateOwnCurves(ctx context.Context, tx pgx.Tx, log *zap.Logger, explain func(string, error) error) (schema.ViewRefresh, bool, error) {
	r := schema.ViewRefresh{View: LatestBenchmarksView}
	var pending bool
	if err := tx.QueryRow(ctx, qCurveOwnMarks).Scan(&pending); err != nil {
		return r, false, explain("latest_benchmarks: look up the run's changes", err)
	}
	if !pending {
		r.Status = schema.RefreshSkipped
		return r, false, nil
	}
	began := time.Now()
	if _, err := tx.Exec(ctx, qCurveSavepoint); err != nil {
		return r, false, explain("latest_benchmarks: savepoint", err)
	}
	o, err := updateCurves(ctx, tx, false, false, explain)
	if err == nil {
		_, err = tx.Exec(ctx, qCurveStateUpdated, time.Since(began).Milliseconds())
		if err != nil {
			err = explain("latest_benchmarks: record the update", err)
		}
	}
	if err != nil {
		r.Status, r.Error, r.DurationMS = schema.RefreshFailed, wording.OneLine(err.Error(), 0), time.Since(began).Milliseconds()
		if ctx.Err() != nil {
			return r, false, err
		}
		if _, rerr := tx.Exec(ctx, qCurveRollback); rerr != nil {
			return r, false, errors.Join(err, fmt.Errorf("undo the failed update of latest_benchmarks: %w", rerr))
		}
		log.Error("latest_benchmarks not updated: the view is stale until the next refresh")
		return r, false, nil
	}
	if _, err := tx.Exec(ctx, qCurveRelease); err != nil {
		return r, false, explain("latest_benchmarks: release savepoint", err)
	}
	return o.refresh(time.Since(began)), true, nil
}

// CurveImpact tells, inside the run's transaction and after
// UpdateLatestBenchmarks, which curves of latest_benchmarks the run
// touched, and the rows each showed before and shows after (a curve the
// run only confirmed has the same rows on both sides). Curves are in id
// order, rows in point order.
func (t *RunTx) CurveImpact(ctx context.Context) ([]schema.CurveImpact, error) {
	if !t.curvesUpdated {
		return nil, nil
	}
	return curveImpact(ctx, t.tx)
}

func curveImpact(ctx context.Context, q pgx.Tx) ([]schema.CurveImpact, error) {
	// The touched curves, then their points: one round trip.
	b := &pgx.Batch{}
	b.Queue(qCurveTouchedOnly)
	b.Queue(qCurveImpact)
	res := q.SendBatch(ctx, b)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return nil, fmt.Errorf("list the touched curves: %w", err)
	}
	var (
		out           []schema.CurveImpact
		c             schema.CurveImpact
		before, after int // the points each side will hold
	)
	at := map[int64]int{}
	_, err = pgx.ForEachRow(rows, []any{&c.CurveID, &c.Scope, &before, &after}, func() error {
		at[c.CurveID] = len(out)
		// Sized once, so a large run's points are not copied over and
		// over as the slices grow.
		out = append(out, schema.CurveImpact{CurveID: c.CurveID, Scope: c.Scope,
			Before: make([]schema.CurvePoint, 0, before), After: make([]schema.CurvePoint, 0, after)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the touched curves: %w", err)
	}
	if rows, err = res.Query(); err != nil {
		return nil, fmt.Errorf("read the curves' rows: %w", err)
	}
	configs, runs := map[int64]*schema.Config{}, map[int64]gitHubRun{}
	var (
		p        schema.CurvePoint // scanned into, then copied: one allocation, not one a row
		curve    int64
		shown    bool // the side: shown after the update, else before
		isl, osl *int32
		conc     int32
	)
	v := &p.Values
	_, err = pgx.ForEachRow(rows, []any{&curve, &shown, &p.ResultID, &p.Deleted, &p.ConfigID, &p.WorkflowRunID, &p.BenchmarkType,
		&isl, &osl, &p.OffloadMode, &p.RecipeFingerprint, &conc, &p.SnapshotDate, &p.SnapshotWorkflowRunID,
		&v.TputPerGPU, &v.OutputTputPerGPU, &v.MedianIntvty, &v.P90E2EL, &v.MedianTTFT}, func() error {
		p.ISL, p.OSL, p.Conc = intOf(isl), intOf(osl), int(conc)
		configs[p.ConfigID] = nil
		runs[p.SnapshotWorkflowRunID] = gitHubRun{}
		if p.WorkflowRunID != 0 {
			runs[p.WorkflowRunID] = gitHubRun{}
		}
		i, ok := at[curve]
		if !ok {
			return fmt.Errorf("curve %d is not among the touched curves", curve)
		}
		if shown {
			out[i].After = append(out[i].After, p)
		} else {
			out[i].Before = append(out[i].Before, p)
		}
		p = schema.CurvePoint{} // the next row's pointers are its own
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the curves' rows: %w", err)
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("read the curves' rows: %w", err)
	}
	if err := impactNames(ctx, q, configs, runs); err != nil {
		return nil, err
	}
	for i := range out {
		for _, side := range [][]schema.CurvePoint{out[i].Before, out[i].After} {
			for j := range side {
				if err := namePoint(&side[j], configs, runs); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Before, comparePoints)
		slices.SortFunc(out[i].After, comparePoints)
	}
	return out, nil
}

// gitHubRun is the GitHub run and attempt of a workflow run row.
type gitHubRun struct {
	id      int64
	attempt int
}

// impactNames reads the configs and the GitHub runs the impact's rows
// name (the keys of configs and runs) in one round trip.
func impactNames(ctx context.Context, q pgx.Tx, configs map[int64]*schema.Config, runs map[int64]gitHubRun) error {
	b := &pgx.Batch{}
	b.Queue(qCurveImpactConfigs, slices.Collect(maps.Keys(configs)))
	b.Queue(qCurveImpactRuns, slices.Collect(maps.Keys(runs)))
	res := q.SendBatch(ctx, b)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("read the curves' configs: %w", err)
	}
	var (
		id                                   int64
		cf                                   schema.Config
		ptp, pep, pw, dtp, dep, dw, npg, ndg int16
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &cf.SpecMethod, &cf.Disagg, &cf.IsMultinode, &ptp, &pep, &cf.PrefillDPAttention, &pw,
		&dtp, &dep, &cf.DecodeDPAttention, &dw, &npg, &ndg}, func() error {
		c := cf
		c.PrefillTP, c.PrefillEP, c.PrefillNumWorkers = int(ptp), int(pep), int(pw)
		c.DecodeTP, c.DecodeEP, c.DecodeNumWorkers = int(dtp), int(dep), int(dw)
		c.NumPrefillGPU, c.NumDecodeGPU = int(npg), int(ndg)
		configs[id] = &c
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the curves' configs: %w", err)
	}
	if rows, err = res.Query(); err != nil {
		return fmt.Errorf("read the curves' runs: %w", err)
	}
	var (
		run     int64
		attempt int32
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &run, &attempt}, func() error {
		runs[id] = gitHubRun{id: run, attempt: int(attempt)}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the curves' runs: %w", err)
	}
	return res.Close()
}

// namePoint sets a point's config and the GitHub runs of its row and
// snapshot from what impactNames read. A row's config and snapshot run
// are always stored (they are what shows it), except for a deleted row,
// whose run and snapshot run may have been purged with it (then 0).
func namePoint(p *schema.CurvePoint, configs map[int64]*schema.Config, runs map[int64]gitHubRun) error {
	cf := configs[p.ConfigID]
	if cf == nil {
		return fmt.Errorf("read the curves' configs: config %d of row %d is not stored", p.ConfigID, p.ResultID)
	}
	snapshot := runs[p.SnapshotWorkflowRunID]
	if snapshot.id == 0 && !p.Deleted {
		return fmt.Errorf("read the curves' runs: snapshot run %d of row %d is not stored", p.SnapshotWorkflowRunID, p.ResultID)
	}
	p.Config, p.SnapshotGitHubRunID = *cf, snapshot.id
	if p.WorkflowRunID != 0 {
		r := runs[p.WorkflowRunID]
		p.GitHubRunID, p.RunAttempt = r.id, r.attempt
	}
	return nil
}

// comparePoints orders a curve's points by config and point key (type,
// lengths, offload mode, recipe, concurrency; text in byte order, a NULL
// length last, a NULL recipe first), then row id; a deleted row, which
// has no key, comes after its config's other rows.
func comparePoints(a, b schema.CurvePoint) int {
	if c := cmp.Compare(a.ConfigID, b.ConfigID); c != 0 {
		return c
	}
	if a.Deleted != b.Deleted {
		if a.Deleted {
			return 1
		}
		return -1
	}
	if !a.Deleted {
		if c := cmp.Or(strings.Compare(a.BenchmarkType, b.BenchmarkType), compareNullable(a.ISL, b.ISL, false),
			compareNullable(a.OSL, b.OSL, false), strings.Compare(a.OffloadMode, b.OffloadMode),
			compareNullable(a.RecipeFingerprint, b.RecipeFingerprint, true), cmp.Compare(a.Conc, b.Conc)); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.ResultID, b.ResultID)
}

// compareNullable compares two optional values; a NULL comes last, or
// first with nullsFirst.
func compareNullable[T cmp.Ordered](a, b *T, nullsFirst bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil, b == nil:
		if (a == nil) == nullsFirst {
			return -1
		}
		return 1
	}
	return cmp.Compare(*a, *b)
}

func intOf(v *int32) *int {
	if v == nil {
		return nil
	}
	x := int(*v)
	return &x
}
