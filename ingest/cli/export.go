package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/export"
	"github.com/inferencex/ingest/ingest/store"
)

// exportCommand writes stored data out: `ingest export telemetry --run-id
// N [--attempt A] --out FILE.parquet` writes a run's GPU-metric samples as
// Parquet. --out is written as writeOutput says: a regular file appears
// only when complete, "-" is stdout, a device or a FIFO is written into.
func (a *app) exportCommand() *cobra.Command {
	cmd, s, run := a.command("telemetry --run-id N --out FILE.parquet", "write a run's GPU telemetry as Parquet",
		"Write a run's GPU-metric samples as Parquet; a file appears only when complete (--out - writes to stdout).", 0)
	common := addCommon(s)
	runID := s.id("run-id", "GitHub workflow run id (required)", "INGEST_RUN_ID")
	attempt := s.intIn("attempt", "", 1, 32767, "run attempt (default: the newest attempt with telemetry)", "INGEST_RUN_ATTEMPT")
	out := s.str("out", "", "the Parquet file to write (required; - for stdout)")
	run(func(ctx context.Context, _ []string) int {
		return runExport(ctx, a.env, common, runID.int64(), attempt.int64(), out)
	})
	return a.group("export", "write a run's GPU telemetry as Parquet: ingest export telemetry --run-id N --out F", cmd)
}

func runExport(ctx context.Context, env Env, common *commonOpts, id, att int64, out *setting) int {
	path := out.String()
	if id == 0 {
		fmt.Fprintln(env.Stderr, "ingest export: --run-id is required")
		return ExitUsage
	}
	if path == "" {
		fmt.Fprintln(env.Stderr, "ingest export: --out FILE.parquet is required")
		return ExitUsage
	}
	st, _, code := connectSchema(ctx, common, env) // read-only: never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	var res export.Result
	err := writeOutput(env, out, func(w io.Writer) error {
		var err error
		res, err = export.TelemetryParquet(ctx, st, id, int(att), w)
		return err
	})
	if errors.Is(err, store.ErrNoTelemetry) {
		return fail(env, "export: run %d: %v", id, err)
	}
	if err != nil {
		return fail(env, "export: %v", err)
	}
	// With --out -, stdout is the Parquet file: the note goes to stderr.
	note := env.Stdout
	if path == "-" {
		note = env.Stderr
	}
	fmt.Fprintf(note, "wrote %d samples of run %d attempt %d to %s\n", res.Rows, id, res.Attempt, path)
	return ExitOK
}
