package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// Override kinds of an OverrideAction.
const (
	OverrideConclusion   = "conclusion"
	OverridePurgedRun    = "purged_run"
	OverridePurgedPoint  = "purged_point"
	OverrideRetiredPower = "retired_gpu_power"
	// OverrideRetiredSeriesPower: the retired source's stored telemetry.
	OverrideRetiredSeriesPower = "retired_telemetry_power"
)

// ApplyOverrides applies the run-override ledger to the data already
// stored, in one transaction: conclusions corrected, purged runs, attempts
// and points deleted with what only they used (server logs, trace
// sidecars, telemetry series, availability; the run rows: run stats,
// evals, changelog, dataset), retired GPU power removed. A dry run rolls
// back and records nothing; otherwise the ledger keeps an entry
// (override_applications) with the result, also when nothing changed.
// The latest_benchmarks view is marked by its triggers; the caller
// refreshes it.
func (s *Store) ApplyOverrides(ctx context.Context, plan schema.OverridePlan, dryRun bool, toolVersion string) (schema.OverrideResult, int64, error) {
	res, _, id, err := s.applyOverridesTx(ctx, plan, dryRun, toolVersion, nil)
	return res, id, err
}

// ApplyOverridesJudged is ApplyOverrides that also brings latest_benchmarks
// up to date in the apply's transaction, as a run's ingest does, and has
// judge (the coverage guard) see what that does to the curves before the
// commit — on a dry run too: view is the outcome of the update, curves
// the touched curves as they were and are (none unless the update ran).
// An error of judge rolls the apply back and is returned. It returns the
// update's outcome: one that failed leaves the change marks for a refresh
// after the commit.
func (s *Store) ApplyOverridesJudged(ctx context.Context, plan schema.OverridePlan, dryRun bool, toolVersion string,
	judge func(ctx context.Context, view schema.ViewRefresh, curves []schema.CurveImpact) error) (schema.OverrideResult, schema.ViewRefresh, int64, error) {
	return s.applyOverridesTx(ctx, plan, dryRun, toolVersion, judge)
}

func (s *Store) applyOverridesTx(ctx context.Context, plan schema.OverridePlan, dryRun bool, toolVersion string,
	judge func(context.Context, schema.ViewRefresh, []schema.CurveImpact) error) (schema.OverrideResult, schema.ViewRefresh, int64, error) {
	var view schema.ViewRefresh
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return schema.OverrideResult{}, view, 0, fmt.Errorf("apply overrides: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	runs := plan.Runs()
	// A run lock held by a role that cannot write is refused rather than
	// waited for (LockHeldByNonWriterError): nothing but an ingest or an
	// apply has reason to hold it.
	holder, err := firstLockHolder(ctx, tx, runs)
	if err != nil {
		return schema.OverrideResult{}, view, 0, fmt.Errorf("apply overrides: find the holders of the runs' locks: %w", err)
	}
	if holder.PID != 0 && !holder.Writer {
		return schema.OverrideResult{}, view, 0, fmt.Errorf("apply overrides: %w", &LockHeldByNonWriterError{Holder: holder})
	}
	if _, err := tx.Exec(ctx, qOverrideLockRuns, runs); err != nil {
		return schema.OverrideResult{}, view, 0, fmt.Errorf("apply overrides: lock the runs the ledger names: %w", err)
	}
	notFound, err := unknownPurges(ctx, tx, plan)
	if err != nil {
		return schema.OverrideResult{}, view, 0, err
	}
	res, err := applyOverrides(ctx, tx, plan)
	if err != nil {
		return res, view, 0, err
	}
	res.NotFound = notFound
	if judge != nil {
		var updated bool
		if view, updated, err = updateOwnCurves(ctx, tx, s.log, s.opts.explain); err != nil {
			return res, view, 0, fmt.Errorf("apply overrides: %w", err)
		}
		var curves []schema.CurveImpact
		if updated {
			if curves, err = curveImpact(ctx, tx); err != nil {
				return res, view, 0, fmt.Errorf("apply overrides: impact on latest_benchmarks: %w", err)
			}
		}
		if err := judge(ctx, view, curves); err != nil {
			return res, view, 0, err
		}
	}
	if dryRun {
		return res, view, 0, nil
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return res, view, 0, err
	}
	digest := sha256.Sum256(planJSON)
	resJSON, err := json.Marshal(res)
	if err != nil {
		return res, view, 0, err
	}
	var id int64
	if err := tx.QueryRow(ctx, qRecordOverrideApply, toolVersion, digest[:], res.Changed(), resJSON).Scan(&id); err != nil {
		return res, view, 0, fmt.Errorf("apply overrides: record the application: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return res, view, 0, fmt.Errorf("apply overrides: commit: %w", err)
	}
	return res, view, id, nil
}

// unknownPurges are the purge entries of the plan that name a run or
// attempt the database has never had, one per attempt named (Attempt 0:
// the run as a whole), in plan order. A purge of an id that was never
// ingested finds nothing, as a purge already applied does; only this
// tells a mistyped id from the second. Entries of the shipped ledger
// alone are not checked: they purge runs most databases never held.
func unknownPurges(ctx context.Context, tx pgx.Tx, plan schema.OverridePlan) ([]schema.OverrideAction, error) {
	var out []schema.OverrideAction
	check := func(kind string, run int64, attempts []int, target, reason string) error {
		if attempts == nil {
			attempts = []int{}
		}
		unknown, err := ids(ctx, tx, qOverrideUnknownAttempts, run, attempts)
		if err != nil {
			return fmt.Errorf("apply overrides: look up purged run %d: %w", run, err)
		}
		for _, a := range unknown {
			out = append(out, schema.OverrideAction{Kind: kind, RunID: run, Attempt: int(a), Target: target, Reason: reason})
		}
		return nil
	}
	for _, r := range plan.PurgedRuns {
		if r.Shipped {
			continue
		}
		if err := check(OverridePurgedRun, r.RunID, r.Attempts, "", r.Reason); err != nil {
			return nil, err
		}
	}
	for _, x := range plan.PurgedPoints {
		if x.Shipped {
			continue
		}
		var attempts []int
		if x.Attempt != 0 {
			attempts = []int{x.Attempt}
		}
		if err := check(OverridePurgedPoint, x.RunID, attempts, pointTarget(&x.Point), x.Reason); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ApplyRunOverrides applies the ledger entries of the run this
// transaction writes (the caller restricts the plan to it) to what is
// stored of it.
func (t *RunTx) ApplyRunOverrides(ctx context.Context, plan schema.OverridePlan) (schema.OverrideResult, error) {
	res, err := applyOverrides(ctx, t.tx, plan)
	if err != nil {
		return res, t.explain("apply the run overrides", err)
	}
	return res, nil
}

func applyOverrides(ctx context.Context, tx pgx.Tx, plan schema.OverridePlan) (schema.OverrideResult, error) {
	var res schema.OverrideResult
	act := func(kind string, run int64, attempt int, target, reason string, rows int64) {
		if rows > 0 {
			res.Actions = append(res.Actions, schema.OverrideAction{Kind: kind, RunID: run, Attempt: attempt, Target: target,
				Reason: reason, Rows: rows})
		}
	}
	for _, c := range plan.Conclusions {
		tag, err := tx.Exec(ctx, qOverrideConclusion, c.RunID, c.Conclusion)
		if err != nil {
			return res, fmt.Errorf("conclusion of run %d: %w", c.RunID, err)
		}
		res.ConclusionsUpdated += tag.RowsAffected()
		act(OverrideConclusion, c.RunID, 0, c.Conclusion, "", tag.RowsAffected())
	}
	if err := applyChangelogBackfills(ctx, tx, plan, &res); err != nil {
		return res, err
	}
	if err := applyPointBackfills(ctx, tx, plan, &res); err != nil {
		return res, err
	}
	for _, r := range plan.PurgedRuns {
		attempts := r.Attempts
		if attempts == nil {
			attempts = []int{}
		}
		runs, err := ids(ctx, tx, qOverrideRunRows, r.RunID, attempts)
		if err != nil {
			return res, fmt.Errorf("purged run %d: %w", r.RunID, err)
		}
		if len(runs) == 0 {
			continue
		}
		before := res
		results, err := ids(ctx, tx, qOverrideRunResults, runs)
		if err != nil {
			return res, fmt.Errorf("purged run %d: %w", r.RunID, err)
		}
		if err := purgeResults(ctx, tx, results, &res); err != nil {
			return res, fmt.Errorf("purged run %d: %w", r.RunID, err)
		}
		for _, d := range []struct {
			q string
			n *int64
		}{{qOverrideDeleteRunStats, &res.RunStatsDeleted}, {qOverrideDeleteEvals, &res.EvalRowsDeleted},
			{qOverrideDeleteChangelog, &res.ChangelogDeleted}, {qOverrideDeleteRunDataset, &res.RunDatasetsDeleted},
			{qOverrideDeleteRunSeries, &res.GPUMetricSeriesDeleted}, {qOverrideUnlinkIngests, nil}, {qOverrideDeleteRuns, &res.WorkflowRunsDeleted}} {
			tag, err := tx.Exec(ctx, d.q, runs)
			if err != nil {
				return res, fmt.Errorf("purged run %d: %w", r.RunID, err)
			}
			if d.n != nil {
				*d.n += tag.RowsAffected()
			}
		}
		attempt := 0
		if len(r.Attempts) == 1 {
			attempt = r.Attempts[0]
		}
		act(OverridePurgedRun, r.RunID, attempt, attemptsTarget(r.Attempts), r.Reason, rowsDeleted(res)-rowsDeleted(before))
	}
	for _, x := range plan.PurgedPoints {
		rows, err := pointRows(ctx, tx, x.RunID, x.Attempt, "", &x.Point)
		if err != nil {
			return res, fmt.Errorf("purged point of run %d: %w", x.RunID, err)
		}
		if len(rows) == 0 {
			continue
		}
		if err := purgeResults(ctx, tx, rows, &res); err != nil {
			return res, fmt.Errorf("purged point of run %d: %w", x.RunID, err)
		}
		act(OverridePurgedPoint, x.RunID, x.Attempt, pointTarget(&x.Point), x.Reason, int64(len(rows)))
	}
	if len(plan.GPUPowerKeys) > 0 {
		for _, x := range plan.RetiredGPUPower {
			rows, err := pointRows(ctx, tx, x.RunID, x.Attempt, x.HeadSHA, &x.Point)
			if err != nil {
				return res, fmt.Errorf("retired GPU power of run %d: %w", x.RunID, err)
			}
			if len(rows) == 0 {
				continue
			}
			tag, err := tx.Exec(ctx, qOverrideRetireGPUPower, rows, plan.GPUPowerKeys)
			if err != nil {
				return res, fmt.Errorf("retired GPU power of run %d: %w", x.RunID, err)
			}
			res.GPUPowerRowsRewritten += tag.RowsAffected()
			act(OverrideRetiredPower, x.RunID, x.Attempt, pointTarget(&x.Point), x.Reason, tag.RowsAffected())
		}
	}
	for _, x := range plan.RetiredGPUPower {
		if err := retireSeriesPower(ctx, tx, x, &res); err != nil {
			return res, fmt.Errorf("retired GPU power of run %d: telemetry: %w", x.RunID, err)
		}
	}
	return res, nil
}

// rowsDeleted is every deleted row counted in r.
func rowsDeleted(r schema.OverrideResult) int64 {
	return r.WorkflowRunsDeleted + r.BenchmarkRowsDeleted + r.ServerLogsDeleted + r.TraceSidecarsDeleted + r.GPUMetricSeriesDeleted +
		r.AvailabilityDeleted + r.RunStatsDeleted + r.EvalRowsDeleted + r.ChangelogDeleted + r.RunDatasetsDeleted
}

func attemptsTarget(attempts []int) string {
	if len(attempts) == 0 {
		return "every attempt"
	}
	parts := make([]string, len(attempts))
	for i, a := range attempts {
		parts[i] = fmt.Sprint(a)
	}
	return "attempts " + strings.Join(parts, ",")
}

// pointTarget names a point: model precision hardware framework, type,
// isl/osl, conc.
func pointTarget(p *schema.BenchmarkPoint) string {
	c := p.Config
	seq := "-"
	if p.ISL != nil && p.OSL != nil {
		seq = fmt.Sprintf("%d/%d", *p.ISL, *p.OSL)
	}
	return fmt.Sprintf("%s %s %s %s %s %s conc %d offload %s", c.Model, c.Precision, c.Hardware, c.Framework, p.BenchmarkType, seq, p.Conc, p.OffloadMode)
}

func pointRows(ctx context.Context, tx pgx.Tx, run int64, attempt int, head string, p *schema.BenchmarkPoint) ([]int64, error) {
	c := p.Config
	return ids(ctx, tx, qOverridePointRows, slices.Concat([]any{run, attempt}, c.KeyFields(),
		[]any{p.BenchmarkType, p.ISL, p.OSL, p.Conc, p.OffloadMode, p.RecipeFingerprint, head})...)
}

func ids(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// purgeResults deletes benchmark rows and what only they used.
func purgeResults(ctx context.Context, tx pgx.Tx, results []int64, res *schema.OverrideResult) error {
	if len(results) == 0 {
		return nil
	}
	var logs, sidecars, series []int64
	if err := tx.QueryRow(ctx, qOverrideDependents, results).Scan(&logs, &sidecars, &series); err != nil {
		return fmt.Errorf("find dependents: %w", err)
	}
	if _, err := tx.Exec(ctx, qOverrideAvailabilityKeys, results); err != nil {
		return fmt.Errorf("availability keys: %w", err)
	}
	steps := []struct {
		what string
		q    string
		arg  []int64
		n    *int64
	}{
		{"benchmark rows", qOverrideDeleteResults, results, &res.BenchmarkRowsDeleted},
		{"server logs", qOverrideDeleteServerLogs, logs, &res.ServerLogsDeleted},
		{"trace sidecars", qOverrideDeleteSidecars, sidecars, &res.TraceSidecarsDeleted},
		{"telemetry series", qOverrideDeleteSeries, series, &res.GPUMetricSeriesDeleted},
	}
	for _, st := range steps {
		if len(st.arg) == 0 {
			continue
		}
		tag, err := tx.Exec(ctx, st.q, st.arg)
		if err != nil {
			return fmt.Errorf("delete %s: %w", st.what, err)
		}
		*st.n += tag.RowsAffected()
	}
	var n int64
	if err := tx.QueryRow(ctx, qOverrideDeleteAvailability).Scan(&n); err != nil {
		return fmt.Errorf("delete availability: %w", err)
	}
	res.AvailabilityDeleted += n
	if _, err := tx.Exec(ctx, qOverrideDropAvailability); err != nil {
		return fmt.Errorf("availability keys: %w", err)
	}
	return nil
}

// retireSeriesPower removes the power of the stored AMD telemetry series
// whose CSV bytes are the retired source's (the reference's stored-series
// match: run, the entry's attempt and head commit where stored, vendor
// amd, CSV sha256): power samples, per-GPU power statistics and the
// series' power facts. Temperatures, clocks and utilisation stay.
func retireSeriesPower(ctx context.Context, tx pgx.Tx, x schema.OverrideRetired, res *schema.OverrideResult) error {
	if x.CSVSHA256 == "" {
		return nil
	}
	series, err := ids(ctx, tx, qOverrideRetiredSeries, x.RunID, x.Attempt, x.HeadSHA, x.CSVSHA256)
	if err != nil || len(series) == 0 {
		return err
	}
	for _, q := range []string{qOverrideRetireChunkPower, qOverrideRetireStatsPower, qOverrideRetireSeriesPower} {
		if _, err := tx.Exec(ctx, q, series); err != nil {
			return err
		}
	}
	res.TelemetryPowerSeriesRewritten += int64(len(series))
	res.Actions = append(res.Actions, schema.OverrideAction{Kind: OverrideRetiredSeriesPower, RunID: x.RunID, Attempt: x.Attempt,
		Target: "telemetry " + x.CSVSHA256[:min(12, len(x.CSVSHA256))] + "… of " + pointTarget(&x.Point), Reason: x.Reason, Rows: int64(len(series))})
	return nil
}
