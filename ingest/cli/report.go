package cli

import (
	"context"
	"fmt"

	"github.com/inferencex/ingest/ingest/report"
)

// runReport re-renders the stored summary of a run's newest ingest.
func runReport(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("report", env)
	common := addCommon(s)
	runID := s.str("run-id", "", "GitHub workflow run id", "INGEST_RUN_ID")
	attempt := s.str("attempt", "", "run attempt (default: the newest ingest of any attempt)", "INGEST_RUN_ATTEMPT")
	format := s.str("format", "md", "text, md or json", "INGEST_REPORT_FORMAT")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest report --run-id N [--attempt A] [--format md|json|text]")
		fs.PrintDefaults()
	}
	if _, ok, code := parse(fs, s, args, 0); !ok {
		return code
	}
	id, err := runID.int64()
	if err != nil || id == 0 {
		fmt.Fprintln(env.Stderr, "ingest report: --run-id is required and must be a positive integer")
		return ExitUsage
	}
	att, err := attempt.int64()
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest report:", err)
		return ExitUsage
	}
	if !validFormat(format.String()) {
		fmt.Fprintf(env.Stderr, "ingest report: --format %q is not one of %v\n", format.String(), report.Formats())
		return ExitUsage
	}
	st, _, code := connect(ctx, common, env) // a read-only command never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	sum, err := st.LatestSummary(ctx, id, int(att))
	if err != nil {
		return fail(env, "%v", err)
	}
	if err := report.Render(env.Stdout, sum, format.String()); err != nil {
		return fail(env, "%v", err)
	}
	return ExitOK
}
