package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/export"
	"github.com/inferencex/ingest/ingest/store"
)

// exportCommand writes stored data out: `ingest export telemetry --run-id
// N [--attempt A] --out FILE.parquet` writes a run's GPU-metric samples as
// Parquet. The file appears only when complete (written beside it, then
// renamed).
func (a *app) exportCommand() *cobra.Command {
	cmd, s, run := a.command("telemetry --run-id N --out FILE.parquet", "write a run's GPU telemetry as Parquet",
		"Write a run's GPU-metric samples as Parquet; the file appears only when complete.", 0)
	common := addCommon(s)
	runID := s.id("run-id", "GitHub workflow run id (required)", "INGEST_RUN_ID")
	attempt := s.intIn("attempt", "", 1, 32767, "run attempt (default: the newest attempt with telemetry)", "INGEST_RUN_ATTEMPT")
	out := s.str("out", "", "the Parquet file to write (required)")
	run(func(ctx context.Context, _ []string) int {
		return runExport(ctx, a.env, common, runID.int64(), attempt.int64(), out.String())
	})
	return a.group("export", "write a run's GPU telemetry as Parquet: ingest export telemetry --run-id N --out F", cmd)
}

func runExport(ctx context.Context, env Env, common *commonOpts, id, att int64, path string) int {
	if id == 0 {
		fmt.Fprintln(env.Stderr, "ingest export: --run-id is required")
		return ExitUsage
	}
	if path == "" {
		fmt.Fprintln(env.Stderr, "ingest export: --out FILE.parquet is required")
		return ExitUsage
	}
	st, _, code := connect(ctx, common, env) // read-only: never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fail(env, "export: %v", err)
	}
	defer os.Remove(tmp.Name())              // no-op after the rename
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it private
		tmp.Close()
		return fail(env, "export: %v", err)
	}
	res, err := export.TelemetryParquet(ctx, st, id, int(att), tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if errors.Is(err, store.ErrNoTelemetry) {
		return fail(env, "export: run %d: %v", id, err)
	}
	if err != nil {
		return fail(env, "export: %v", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(env, "export: %v", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %d samples of run %d attempt %d to %s\n", res.Rows, id, res.Attempt, path)
	return ExitOK
}
