package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/compare"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// compareCommand reads a run tree as load would and compares it, read
// only, with what a database of ours or of the reference ingest holds for
// the run (docs/operations.md, "Comparing with the reference ingest").
func (a *app) compareCommand() *cobra.Command {
	cmd, s, run := a.command("compare DIR --against URL",
		"compare a run tree, read as load would, with what a database holds for the run: ingest compare DIR --against URL",
		"Read a run tree as `ingest load` does and compare it, in one read-only transaction, with the run's rows in a\n"+
			"database of ours or of the reference ingest. Each difference is explained by a documented rule or unexplained.\n"+
			"Exit 0 when every difference is explained, 1 on any unexplained difference, 2 on usage errors. Writes nothing.", 1)
	against := s.str("against", "", "the database to compare with (a PostgreSQL URL; a read-only role suffices)", "INGEST_COMPARE_URL")
	runID := s.id("run-id", "GitHub workflow run id (default: the run in artifacts.json)", "INGEST_RUN_ID")
	attempt := s.intIn("attempt", "", 1, 32767, "run attempt (default: artifacts.json, else 1)", "INGEST_RUN_ATTEMPT")
	format := addReportFormat(s, compare.FormatText)
	catalogFiles := s.str("catalog", "", "comma-separated alias-table extension files", "INGEST_CATALOG")
	overrideFiles := s.str("overrides", "", "comma-separated run-override files", "INGEST_OVERRIDES")
	run(func(ctx context.Context, positional []string) int {
		return runCompare(ctx, a.env, positional, against.String(), runID.int64(), int(attempt.int64()), format.String(),
			catalogFiles.String(), overrideFiles.String())
	})
	return cmd
}

func runCompare(ctx context.Context, env Env, positional []string, against string, runID int64, attempt int,
	format, catalogFiles, overrideFiles string) int {
	usageErr := func(f string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ingest compare: "+f+"\n", a...)
		return ExitUsage
	}
	if len(positional) != 1 {
		return usageErr("the run tree is required (ingest compare DIR --against URL)")
	}
	dir := positional[0]
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return usageErr("the run tree %q is not a directory", dir)
	}
	if against == "" {
		return usageErr("--against is required: the URL of the database to compare with")
	}
	cfgConn, err := pgx.ParseConfig(against)
	if err != nil {
		return usageErr("--against: not a PostgreSQL URL")
	}
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(env.Stderr), zap.WarnLevel))
	deps, err := loadDepsFrom(catalogFiles, overrideFiles, log)
	if err != nil {
		return usageErr("%v", err)
	}
	deps.Build = nil
	tree, err := source.Open(ctx, dir, log)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer tree.Close()
	conn, err := pgx.ConnectConfig(ctx, cfgConn)
	if err != nil {
		return fail(env, "connect to the database to compare with: %v", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	cfg := ingest.Config{Run: schema.RunIdentity{SourceRunID: runID, SourceRunAttempt: attempt}}
	res, err := compare.Run(ctx, cfg, tree, deps, conn)
	if err != nil {
		return fail(env, "%v", err)
	}
	if err := compare.Write(env.Stdout, res, format); err != nil {
		return fail(env, "write the comparison: %v", err)
	}
	if res.Unexplained() > 0 {
		return ExitDifferences
	}
	return ExitOK
}
