package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// refreshCommand applies to latest_benchmarks the changes still pending
// (each ingest updates it in its own transaction; this applies what other
// writers committed), or recomputes every curve with --force. --dry-run
// only says what it would do.
func (a *app) refreshCommand() *cobra.Command {
	cmd, s, run := a.command("refresh", "refresh the dashboard's latest_benchmarks view now: ingest refresh [--force] [--dry-run]",
		"Apply to latest_benchmarks the changes still pending, or recompute every curve with --force.", 0)
	common := addCommon(s)
	dryRun := s.flag("dry-run", "show the view's state and whether a refresh is due, refresh nothing", "INGEST_DRY_RUN")
	force := s.flag("force", "recompute every curve, even when no change is pending", "INGEST_REFRESH_FORCE")
	format := s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_REFRESH_FORMAT")
	run(func(ctx context.Context, _ []string) int {
		return runRefresh(ctx, a.env, common, dryRun, force, format)
	})
	return cmd
}

func runRefresh(ctx context.Context, env Env, common *commonOpts, dryRun, force *bool, format *setting) int {
	st, _, code := connect(ctx, common, env) // the view comes with the schema: no migration here
	if st == nil {
		return code
	}
	defer st.Close()
	var result *schema.ViewRefresh
	var refreshErr error
	if !*dryRun {
		if err := st.CheckWritable(ctx); err != nil {
			return failOpen(env, err)
		}
		r, err := st.RefreshLatestBenchmarks(ctx, *force)
		result, refreshErr = &r, err
	}
	state, ok, err := st.LatestBenchmarksState(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	if !ok {
		return fail(env, "the database has no latest_benchmarks view yet: run `ingest migrate up` (migration 000006)")
	}
	if format.String() == report.FormatJSON {
		out := struct {
			DryRun  bool                `json:"dryRun"`
			Refresh *schema.ViewRefresh `json:"refresh,omitempty"`
			State   schema.ViewState    `json:"state"`
		}{*dryRun, result, state}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(env, "%v", err)
		}
	} else {
		switch {
		case result == nil && (state.Stale || *force):
			fmt.Fprintln(env.Stdout, "dry run: latest_benchmarks would be refreshed")
		case result == nil:
			fmt.Fprintln(env.Stdout, "dry run: latest_benchmarks is fresh, a refresh would be skipped")
		case result.Status == schema.RefreshRefreshed:
			fmt.Fprintf(env.Stdout, "latest_benchmarks refreshed in %d ms (%d pending changes)\n", result.DurationMS, result.Changes)
		case result.Status == schema.RefreshSkipped:
			fmt.Fprintln(env.Stdout, "latest_benchmarks is fresh: nothing to refresh (--force refreshes anyway)")
		}
		if err := report.ViewStatus(env.Stdout, []schema.ViewState{state}); err != nil {
			return fail(env, "%v", err)
		}
	}
	if refreshErr != nil {
		return fail(env, "%v", refreshErr)
	}
	return ExitOK
}
