package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// overridesCommand is `ingest overrides apply`: the run-override ledger and
// the source policies applied to the data already stored, in one
// transaction that also brings latest_benchmarks up to date, under the
// coverage guard of load and backfill.
func (a *app) overridesCommand() *cobra.Command {
	cmd, s, run := a.command("apply", "apply the run-override ledger to stored data",
		"Apply the run-override ledger and the source policies to the data already stored, in one transaction,\n"+
			"then refresh latest_benchmarks.", 0)
	common := addCommon(s)
	common.addNoMigrate(s)
	coverage := addCoverage(s)
	dryRun := s.flag("dry-run", "show what would be deleted and rewritten, change nothing", "INGEST_DRY_RUN")
	catalogFiles := s.str("catalog", "", "comma-separated alias-table extension files (the GPU power keys a retired source loses)", "INGEST_CATALOG")
	overrideFiles := s.str("overrides", "", "comma-separated run-override files (JSON, same shape as the embedded ledger)", "INGEST_OVERRIDES")
	format := s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_OVERRIDES_FORMAT")
	run(func(ctx context.Context, _ []string) int {
		return runOverrides(ctx, a.env, common, coverage, dryRun, catalogFiles, overrideFiles, format)
	})
	return a.group("overrides", "apply the run-override ledger to stored data: ingest overrides apply [--dry-run]", cmd)
}

func runOverrides(ctx context.Context, env Env, common *commonOpts, coverage coverageOpts, dryRun *bool, catalogFiles, overrideFiles, format *setting) int {
	log, err := newLogger(common, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return ExitUsage
	}
	mode, accept, err := coverage.values()
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return ExitUsage
	}
	deps, err := loadDepsFrom(catalogFiles.String(), overrideFiles.String(), log)
	if err != nil {
		return fail(env, "%v", err)
	}
	st, err := openStore(ctx, common, log, true)
	if err != nil {
		return failOpen(env, err)
	}
	defer st.Close()
	plan := deps.Overrides.Plan(deps.Catalog.GPUPowerKeys())
	// The coverage guard judges the apply as it judges a run: what it does
	// to the published curves, inside its transaction. A loss is
	// acknowledged by the flag, or by a coverageLossAccepted entry of a run
	// the plan names (its changes to those curves are deliberate).
	for _, r := range plan.Runs() {
		accept = append(accept, deps.Overrides.CoverageLossAccepted(r)...)
	}
	var (
		imp     *schema.Impact
		refused []string
	)
	guard := func(_ context.Context, view schema.ViewRefresh, curves []schema.CurveImpact) error {
		var err error
		if imp, err = impact.Compute(curves, view); err != nil {
			return fmt.Errorf("impact on latest_benchmarks: %w", err)
		}
		if open := impact.Guard(imp, mode, accept); len(open) > 0 && mode == schema.CoverageGuardRefuse {
			imp.Refused, refused = true, open
			return ingest.ErrCoverageRefused
		}
		return nil
	}
	res, view, id, err := st.ApplyOverridesJudged(ctx, plan, *dryRun, toolVersion(env.Version), guard)
	if errors.Is(err, ingest.ErrCoverageRefused) {
		if code := writeOverrideRefusal(env, format.String(), imp); code != ExitOK {
			return code
		}
		fail(env, "overrides apply: %s (nothing was changed)", overridesRefusal(refused))
		return ExitCoverageRefused
	}
	if err != nil {
		return fail(env, "overrides apply: %v (nothing was changed)", err)
	}
	var refresh *schema.ViewRefresh
	var refreshErr error
	if !*dryRun && res.Changed() {
		// The apply's transaction updated the curves it changed; a failed
		// or skipped update leaves the change marks to a refresh now.
		if view.Status == schema.RefreshRefreshed {
			refresh = &view
		} else {
			r, err := st.RefreshLatestBenchmarks(ctx, false)
			refresh, refreshErr = &r, err
		}
	}
	if !res.Changed() {
		imp = nil
	}
	if format.String() == report.FormatJSON {
		out := struct {
			DryRun        bool                  `json:"dryRun"`
			ApplicationID int64                 `json:"applicationId,omitempty"`
			Changed       bool                  `json:"changed"`
			Result        schema.OverrideResult `json:"result"`
			Refresh       *schema.ViewRefresh   `json:"latestBenchmarks,omitempty"`
			Impact        *schema.Impact        `json:"impact,omitempty"`
		}{*dryRun, id, res.Changed(), res, refresh, imp}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(env, "%v", err)
		}
	} else {
		writeOverrideResult(env.Stdout, res, *dryRun, id, refresh)
		if imp != nil {
			fmt.Fprint(env.Stdout, report.ImpactText(imp))
		}
	}
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		for _, a := range res.NotFound {
			fmt.Fprintf(env.Stderr, "::warning title=%s::%s\n", escapeProperty("Purge of an unknown run"), escapeData(ingest.OverrideNotFoundLine(a)))
		}
	}
	if refreshErr != nil {
		return fail(env, "refresh latest_benchmarks: %v (the overrides were applied; `ingest refresh` retries)", refreshErr)
	}
	return ExitOK
}

// overridesRefusal is the error of an apply the coverage guard refused:
// the curves, and how to acknowledge the loss.
func overridesRefusal(keys []string) string {
	return fmt.Sprintf("the coverage guard refused the apply: it would shrink %d published curve(s) (%s); to apply it deliberately, "+
		"rerun with --accept-coverage-loss %s, or add a coverageLossAccepted entry (run id, curves, reason) for the run to the run overrides",
		len(keys), strings.Join(keys, ", "), strings.Join(keys, ","))
}

// writeOverrideRefusal writes what a refused apply would have done to the
// dashboard (imp; nil when the guard never ran), in format.
func writeOverrideRefusal(env Env, format string, imp *schema.Impact) int {
	if imp == nil {
		return ExitOK
	}
	if format != report.FormatJSON {
		fmt.Fprint(env.Stdout, report.ImpactText(imp))
		return ExitOK
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Refused bool           `json:"refused"`
		Impact  *schema.Impact `json:"impact"`
	}{true, imp}); err != nil {
		return fail(env, "%v", err)
	}
	return ExitOK
}

// writeOverrideResult is the text report of an apply. Purges of runs the
// database never had come first: "nothing changed" must not hide them.
func writeOverrideResult(w io.Writer, res schema.OverrideResult, dryRun bool, id int64, refresh *schema.ViewRefresh) {
	for _, a := range res.NotFound {
		fmt.Fprintf(w, "warning: %s\n", ingest.OverrideNotFoundLine(a))
	}
	switch {
	case !res.Changed() && dryRun:
		fmt.Fprintln(w, "dry run: the stored data already reflects the run overrides; nothing would change")
		return
	case !res.Changed():
		fmt.Fprintf(w, "the stored data already reflects the run overrides: nothing changed (application #%d recorded)\n", id)
		return
	case dryRun:
		fmt.Fprintln(w, "dry run: nothing was changed; applying would")
	default:
		fmt.Fprintf(w, "applied the run overrides (application #%d)\n", id)
	}
	verb := "deleted"
	if dryRun {
		verb = "delete"
	}
	fmt.Fprintf(w, "%s: %d workflow runs, %d benchmark rows, %d server logs, %d trace sidecars, %d telemetry series, "+
		"%d availability rows, %d run stats, %d eval rows, %d changelog entries, %d run datasets\n", verb,
		res.WorkflowRunsDeleted, res.BenchmarkRowsDeleted, res.ServerLogsDeleted, res.TraceSidecarsDeleted, res.GPUMetricSeriesDeleted,
		res.AvailabilityDeleted, res.RunStatsDeleted, res.EvalRowsDeleted, res.ChangelogDeleted, res.RunDatasetsDeleted)
	verb = "rewrote"
	if dryRun {
		verb = "rewrite"
	}
	fmt.Fprintf(w, "%s: %d conclusions, %d rows' GPU power, %d telemetry series' GPU power, %d benchmark rows (point backfills), %d changelog rows (changelog backfills)\n",
		verb, res.ConclusionsUpdated, res.GPUPowerRowsRewritten, res.TelemetryPowerSeriesRewritten, res.PointBackfillRowsRewritten, res.ChangelogRowsRewritten)
	for _, a := range res.Actions {
		fmt.Fprintf(w, "  %s\n", ingest.OverrideActionLine(a))
	}
	if refresh != nil {
		fmt.Fprintf(w, "latest_benchmarks %s (%d pending changes)\n", refresh.Status, refresh.Changes)
	}
}
