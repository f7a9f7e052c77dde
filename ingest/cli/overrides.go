package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// overridesCommand is `ingest overrides apply`: the run-override ledger and
// the source policies applied to the data already stored, in one
// transaction, then latest_benchmarks refreshed.
func (a *app) overridesCommand() *cobra.Command {
	cmd, s, run := a.command("apply", "apply the run-override ledger to stored data",
		"Apply the run-override ledger and the source policies to the data already stored, in one transaction,\n"+
			"then refresh latest_benchmarks.", 0)
	common := addCommon(s)
	common.addNoMigrate(s)
	dryRun := s.flag("dry-run", "show what would be deleted and rewritten, change nothing", "INGEST_DRY_RUN")
	catalogFiles := s.str("catalog", "", "comma-separated alias-table extension files (the GPU power keys a retired source loses)", "INGEST_CATALOG")
	overrideFiles := s.str("overrides", "", "comma-separated run-override files (JSON, same shape as the embedded ledger)", "INGEST_OVERRIDES")
	format := s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_OVERRIDES_FORMAT")
	run(func(ctx context.Context, _ []string) int {
		return runOverrides(ctx, a.env, common, dryRun, catalogFiles, overrideFiles, format)
	})
	return a.group("overrides", "apply the run-override ledger to stored data: ingest overrides apply [--dry-run]", cmd)
}

func runOverrides(ctx context.Context, env Env, common *commonOpts, dryRun *bool, catalogFiles, overrideFiles, format *setting) int {
	log, err := newLogger(common, env)
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
	res, id, err := st.ApplyOverrides(ctx, plan, *dryRun, toolVersion(env.Version))
	if err != nil {
		return fail(env, "overrides apply: %v (nothing was changed)", err)
	}
	var refresh *schema.ViewRefresh
	var refreshErr error
	if !*dryRun && res.Changed() {
		r, err := st.RefreshLatestBenchmarks(ctx, false)
		refresh, refreshErr = &r, err
	}
	if format.String() == report.FormatJSON {
		out := struct {
			DryRun        bool                  `json:"dryRun"`
			ApplicationID int64                 `json:"applicationId,omitempty"`
			Changed       bool                  `json:"changed"`
			Result        schema.OverrideResult `json:"result"`
			Refresh       *schema.ViewRefresh   `json:"latestBenchmarks,omitempty"`
		}{*dryRun, id, res.Changed(), res, refresh}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(env, "%v", err)
		}
	} else {
		writeOverrideResult(env.Stdout, res, *dryRun, id, refresh)
	}
	if refreshErr != nil {
		return fail(env, "refresh latest_benchmarks: %v (the overrides were applied; `ingest refresh` retries)", refreshErr)
	}
	return ExitOK
}

// writeOverrideResult is the text report of an apply.
func writeOverrideResult(w io.Writer, res schema.OverrideResult, dryRun bool, id int64, refresh *schema.ViewRefresh) {
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
