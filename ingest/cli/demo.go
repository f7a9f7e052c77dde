package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/store"
)

// runDemo creates the database if needed, migrates it, and ingests the demo
// run bundled in the binary (a dry run does neither: it needs a migrated
// database). A run written with its designed failures is a
// successful demo (exit 0); only an aborted ingest fails it.
func runDemo(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("demo", env)
	opts := addIngest(s)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest demo [--database-url URL] [--format text|md|json] [--dry-run]")
		fs.PrintDefaults()
	}
	if _, ok, code := parse(fs, s, args, 0); !ok {
		return code
	}
	if !validFormat(opts.format.String()) {
		fmt.Fprintf(env.Stderr, "ingest demo: --format %q is not one of %v\n", opts.format.String(), report.Formats())
		return ExitUsage
	}
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
	if code == ExitCompletedWithFailures {
		return ExitOK
	}
	return code
}

// demoCreateHint ends the refusal of a dry demo whose database does not
// exist.
const demoCreateHint = `run "ingest demo" without --dry-run to create and migrate it`
