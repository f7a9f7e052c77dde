// Package cli is the command tree of the ingest binary. It parses flags and
// environment, wires the stages together and maps outcomes to exit codes.
package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/inferencex/ingest/ingest/gctarget"
)

// Env is the process environment a command runs in; tests inject their own.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// GC is the garbage-collection target the command set (nil: none);
	// the telemetry stage raises it while it runs (Deps.LargeHeap).
	GC *gctarget.Target
	// Version is the release version stamped into the binary at link time
	// (cmd/ingest's version, set by the release build); empty: the module
	// version from the build information.
	Version string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env Env, args []string) int
}

func commands() []command {
	return []command{
		{"load", "ingest a downloaded run tree: ingest load DIR --run-id N", runLoad},
		{"run", "fetch a run from GitHub, ingest it, comment on its PR: ingest run --run-id N", runRun},
		{"demo", "migrate, then ingest the bundled demo run and print its report", runDemo},
		{"backfill", "ingest a workflow's history, a run list or a directory of trees: ingest backfill --repo R", runBackfill},
		{"overrides", "apply the run-override ledger to stored data: ingest overrides apply [--dry-run]", runOverrides},
		{"refresh", "refresh the dashboard's latest_benchmarks view now: ingest refresh [--force] [--dry-run]", runRefresh},
		{"supplemental", "load hand-curated rows: ingest supplemental supplemental-evals.json supplemental-bmk.json", runSupplemental},
		{"status", "the ledger at a glance: recent ingests, backfill passes; --run-id N for one run", runStatus},
		{"report", "re-render the stored report of a run: ingest report --run-id N", runReport},
		{"audit", "list merged sweeps without a successful ingest, with cause and recovery command: ingest audit --repo R --since DATE", runAudit},
		{"preview", "print a run's normalized rows as the site's unofficial-run overlay reads them, no database: ingest preview DIR", runPreview},
		{"verify", "read a stored run back and check it against the ledger and latest_benchmarks: ingest verify --run-id N", runVerify},
		{"migrate", "manage the schema: ingest migrate up|down [N]|force N|version", runMigrate},
		{"reader", "the dashboard's read-only role: ingest reader create ROLE [--dry-run]", runReader},
		{"datasets", "load an agentic trace corpus for the /datasets pages: ingest datasets load FILE --dataset ID", runDatasets},
		{"export", "write a run's GPU telemetry as Parquet: ingest export telemetry --run-id N --out F", runExport},
		{"version", "print the version", runVersion},
	}
}

// Main runs one command line and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stderr)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "ingest: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return ExitUsage
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("ingest loads InferenceX benchmark runs into PostgreSQL and reports what landed.\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-12s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'ingest COMMAND -h' for a command's options. Options come from flags, then the\n" +
		"environment, then defaults (flag > environment > default).\n" +
		"Exit codes: 0 success, 1 aborted (nothing written), 2 usage, 3 written with failures.\n")
	fmt.Fprint(w, b.String())
}

func runVersion(_ context.Context, env Env, _ []string) int {
	fmt.Fprintln(env.Stdout, "ingest", toolVersion(env.Version))
	return ExitOK
}
