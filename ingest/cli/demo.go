package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/store"
)

// demoCommand creates the database if needed, migrates it, and ingests the
// demo run bundled in the binary (a dry run does neither: it needs a
// migrated database). A run written with its designed failures is a
// successful demo (exit 0); an aborted ingest fails it, and an output
// (--summary-json, --unmapped-output) that could not be written exits 3.
func (a *app) demoCommand() *cobra.Command {
	cmd, s, run := a.command("demo", "migrate, then ingest the bundled demo run and print its report",
		"Create the database if needed, migrate it, ingest the demo run bundled in the binary and print its report.", 0)
	opts := addIngest(s)
	run(func(ctx context.Context, _ []string) int { return runDemo(ctx, a.env, opts) })
	return cmd
}

func runDemo(ctx context.Context, env Env, opts *ingestOpts) int {
	if err := opts.check(); err != nil {
		fmt.Fprintln(env.Stderr, "ingest demo:", err)
		return ExitUsage
	}
	// A dry run creates nothing: ingestTree refuses a missing database.
	if !*opts.dryRun {
		if _, err := store.EnsureDatabase(ctx, opts.dbURL.String()); err != nil {
			return fail(env, "%v", err)
		}
	}
	dir, err := os.MkdirTemp("", "ingest-demo-")
	if err != nil {
		return fail(env, "%v", err)
	}
	defer os.RemoveAll(dir)
	if err := fixtures.WriteDemoRun(dir); err != nil {
		return fail(env, "unpack the demo run: %v", err)
	}
	code := ingestTree(ctx, env, opts, dir, demoCreateHint)
	if code == ExitCompletedWithFailures && !opts.outputFailed {
		return ExitOK
	}
	return code
}

// demoCreateHint ends the refusal of a dry demo whose database does not
// exist.
const demoCreateHint = `run "ingest demo" without --dry-run to create and migrate it`
