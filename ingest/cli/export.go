package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferencex/ingest/ingest/export"
	"github.com/inferencex/ingest/ingest/store"
)

// runExport writes stored data out: `ingest export telemetry --run-id N
// [--attempt A] --out FILE.parquet` writes a run's GPU-metric samples as
// Parquet. The file appears only when complete (written beside it, then
// renamed).
func runExport(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("export", env)
	common := addCommon(s)
	runID := s.str("run-id", "", "GitHub workflow run id", "INGEST_RUN_ID")
	attempt := s.str("attempt", "", "run attempt (default: the newest attempt with telemetry)", "INGEST_RUN_ATTEMPT")
	out := s.str("out", "", "the Parquet file to write")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest export telemetry --run-id N [--attempt A] --out FILE.parquet")
		fs.PrintDefaults()
	}
	pos, ok, code := parse(fs, s, args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 || pos[0] != "telemetry" {
		fmt.Fprintln(env.Stderr, "ingest export: say what to export: ingest export telemetry --run-id N --out FILE.parquet")
		return ExitUsage
	}
	id, err := runID.int64()
	if err != nil || id <= 0 {
		fmt.Fprintln(env.Stderr, "ingest export: --run-id is required and must be a positive integer")
		return ExitUsage
	}
	att, err := attempt.int64()
	if err != nil || att < 0 {
		fmt.Fprintln(env.Stderr, "ingest export: --attempt must be a positive integer")
		return ExitUsage
	}
	if out.String() == "" {
		fmt.Fprintln(env.Stderr, "ingest export: --out FILE.parquet is required")
		return ExitUsage
	}
	st, _, code := connect(ctx, common, env) // read-only: never migrates
	if st == nil {
		return code
	}
	defer st.Close()
	path := out.String()
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
