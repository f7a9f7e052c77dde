package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/report"
)

// reportCommand re-renders the stored summary of a run's newest ingest.
func (a *app) reportCommand() *cobra.Command {
	cmd, s, run := a.command("report --run-id N", "re-render the stored report of a run: ingest report --run-id N",
		"Re-render the stored report of a run's newest ingest (Markdown by default).", 0)
	common := addCommon(s)
	runID := s.id("run-id", "GitHub workflow run id (required)", "INGEST_RUN_ID")
	attempt := s.intIn("attempt", "", 1, 32767, "run attempt (default: the newest ingest of any attempt)", "INGEST_RUN_ATTEMPT")
	format := addReportFormat(s, report.FormatMarkdown)
	run(func(ctx context.Context, _ []string) int {
		env := a.env
		id := runID.int64()
		if id == 0 {
			fmt.Fprintln(env.Stderr, "ingest report: --run-id is required")
			return ExitUsage
		}
		return runReport(ctx, env, common, id, attempt.int64(), format.String())
	})
	return cmd
}

func runReport(ctx context.Context, env Env, common *commonOpts, id, att int64, format string) int {
	st, _, code := connectSchema(ctx, common, env) // a read-only command never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	sum, err := st.LatestSummary(ctx, id, int(att))
	if err != nil {
		return fail(env, "%v", err)
	}
	if err := report.Render(env.Stdout, sum, format); err != nil {
		return fail(env, "%v", err)
	}
	return ExitOK
}
