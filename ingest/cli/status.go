package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// runStatus prints the ledger at a glance: backfill passes and recent
// ingests, or every ingest of one run.
func runStatus(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("status", env)
	common := addCommon(s)
	runID := s.str("run-id", "", "show every ingest of this run", "INGEST_RUN_ID")
	limit := s.str("limit", "20", "number of recent ingests (and backfill passes) to show", "INGEST_STATUS_LIMIT")
	format := s.str("format", "text", "text or json", "INGEST_STATUS_FORMAT")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest status [--run-id N] [--limit N] [--format text|json]")
		fs.PrintDefaults()
	}
	if _, ok, code := parse(fs, s, args, 0); !ok {
		return code
	}
	id, err := runID.int64()
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest status:", err)
		return ExitUsage
	}
	n, err := limit.int64()
	if err != nil || n > 10000 {
		fmt.Fprintf(env.Stderr, "ingest status: --limit: %q is not an integer from 1 to 10000\n", limit.String())
		return ExitUsage
	}
	if f := format.String(); f != report.FormatText && f != report.FormatJSON {
		fmt.Fprintf(env.Stderr, "ingest status: --format %q is not text or json\n", f)
		return ExitUsage
	}
	st, _, code := connect(ctx, common, env) // a read-only command never migrates
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
