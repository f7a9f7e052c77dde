package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// statusCommand prints the ledger at a glance: backfill passes and recent
// ingests, or every ingest of one run.
func (a *app) statusCommand() *cobra.Command {
	cmd, s, run := a.command("status", "the ledger at a glance: recent ingests, backfill passes; --run-id N for one run",
		"Print the ledger at a glance: latest_benchmarks, backfill passes and recent ingests, or every ingest of one run.", 0)
	common := addCommon(s)
	runID := s.id("run-id", "show every ingest of this run", "INGEST_RUN_ID")
	limit := s.intIn("limit", "20", 1, 10000, "number of recent ingests (and backfill passes) to show", "INGEST_STATUS_LIMIT")
	format := s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_STATUS_FORMAT")
	run(func(ctx context.Context, _ []string) int {
		return runStatus(ctx, a.env, common, runID.int64(), limit.int64(), format)
	})
	return cmd
}

func runStatus(ctx context.Context, env Env, common *commonOpts, id, n int64, format *setting) int {
	st, _, code := connectSchema(ctx, common, env) // a read-only command never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	if id != 0 {
		// Every ingest of the run, however many.
		n = 1 << 31
	}
	ingests, err := st.RecentIngests(ctx, int(n), id)
	if err != nil {
		return fail(env, "%v", err)
	}
	var backfills []schema.BackfillInfo
	if id == 0 {
		if backfills, err = st.RecentBackfills(ctx, min(int(n), 10)); err != nil {
			return fail(env, "%v", err)
		}
	}
	var views []schema.ViewState
	if id == 0 {
		v, ok, err := st.LatestBenchmarksState(ctx)
		if err != nil {
			return fail(env, "%v", err)
		}
		if ok {
			views = []schema.ViewState{v}
		}
	}
	outs := targetOutputs(common)
	if id != 0 {
		last := ""
		if len(ingests) > 0 {
			last = string(ingests[0].Status)
		}
		outs = append(outs, output{"ingests", strconv.Itoa(len(ingests))}, output{"last-status", last})
	}
	if err := writeGitHubOutputs(env, outs); err != nil {
		fmt.Fprintln(env.Stderr, "ingest status: warning:", err)
	}
	if format.String() != report.FormatJSON {
		// The database the ledger was read from, by target (never its URL).
		fmt.Fprintf(env.Stdout, "Target %s\n\n", common.target.name)
	}
	if format.String() == report.FormatJSON {
		err = report.StatusJSON(env.Stdout, ingests, backfills, views)
	} else if id != 0 {
		err = report.RunHistory(env.Stdout, id, ingests)
	} else {
		if len(views) > 0 {
			if err = report.ViewStatus(env.Stdout, views); err == nil {
				fmt.Fprintln(env.Stdout)
			}
		}
		if err == nil {
			err = report.Status(env.Stdout, ingests, backfills)
		}
	}
	if err != nil {
		return fail(env, "%v", err)
	}
	return ExitOK
}
