package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/supplemental"
	"github.com/inferencex/ingest/schema"
)

// supplementalCommand loads hand-curated supplemental files (the
// reference's supplemental-evals.json and supplemental-bmk.json) through
// the ingest of a run tree: same normalization and aliases, natural-key
// dedupe, one transaction, the same report, --dry-run.
func (a *app) supplementalCommand() *cobra.Command {
	cmd, s, run := a.command("supplemental FILE...", "load hand-curated rows: ingest supplemental supplemental-evals.json supplemental-bmk.json",
		"Load hand-curated supplemental files through the ingest of a run tree (same normalization, one transaction,\n"+
			"the same report). Their rows belong to a synthetic run: the options naming a run do not apply.", 64)
	opts := addIngest(s)
	// Declared, hidden, so that each is refused with the reason.
	s.hide(runIdentityFlags...)
	date := s.str("date", "", "date of the supplemental run, YYYY-MM-DD (default: the newest row timestamp or date)", "INGEST_SUPPLEMENTAL_DATE")
	run(func(ctx context.Context, files []string) int {
		for _, name := range runIdentityFlags {
			if s.fs.Changed(name) {
				fmt.Fprintf(a.env.Stderr, "ingest supplemental: --%s does not apply: supplemental rows belong to the synthetic run %s/%d\n",
					name, supplemental.Repo, supplemental.RunID)
				return ExitUsage
			}
		}
		return runSupplemental(ctx, a.env, opts, date, files)
	})
	return cmd
}

func runSupplemental(ctx context.Context, env Env, opts *ingestOpts, date *setting, files []string) int {
	if len(files) == 0 {
		fmt.Fprintln(env.Stderr, "ingest supplemental: at least one file is required (supplemental-evals.json, supplemental-bmk.json)")
		return ExitUsage
	}
	// Checked before anything connects, as load checks its run tree.
	for _, f := range files {
		if info, err := os.Stat(f); err != nil || !info.Mode().IsRegular() {
			fmt.Fprintf(env.Stderr, "ingest supplemental: %q is not a file\n", f)
			return ExitUsage
		}
	}
	var day time.Time
	if d := date.String(); d != "" {
		t, err := time.Parse("2006-01-02", d)
		if err != nil {
			fmt.Fprintf(env.Stderr, "ingest supplemental: --date %q is not YYYY-MM-DD\n", d)
			return ExitUsage
		}
		day = t
	}
	log, cfg, code := prepareIngest(opts, env)
	if code != ExitOK {
		return code
	}
	defer log.Sync()
	cfg.Run = schema.RunIdentity{Repo: supplemental.Repo, SourceRunID: supplemental.RunID, SourceRunAttempt: supplemental.RunAttempt}
	dir, err := os.MkdirTemp("", "ingest-supplemental-")
	if err != nil {
		return fail(env, "%v", err)
	}
	defer os.RemoveAll(dir)
	tree, err := supplemental.Write(dir, files, day)
	if err != nil {
		return fail(env, "supplemental: %v", err)
	}
	for _, f := range tree.Files {
		log.Info("supplemental file", zap.String("file", f.Path), zap.String("kind", f.Kind), zap.Int("rows", f.Rows),
			zap.String("sha256", f.Digest()), zap.String("artifact", f.Artifact))
		if len(f.Dates) > 1 || (len(f.Dates) == 1 && f.Dates[0] != tree.CreatedAt.Format("2006-01-02")) {
			log.Warn("benchmark rows carry their own dates; they are stored under the supplemental run's date",
				zap.String("file", f.Path), zap.Strings("dates", f.Dates), zap.Time("run_date", tree.CreatedAt))
		}
	}
	return ingestPrepared(ctx, env, opts, log, cfg, dir, createHint)
}
