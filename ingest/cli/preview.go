package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/preview"
	"github.com/inferencex/ingest/ingest/source"
)

// previewCommand prints a run's normalized aggregate rows as the
// dashboard's unofficial-run overlay consumes them, from a downloaded tree
// or a run id fetched from GitHub; it never touches a database.
func (a *app) previewCommand() *cobra.Command {
	cmd, s, run := a.command("preview [DIR]",
		"print a run's normalized rows as the site's unofficial-run overlay reads them, no database: ingest preview DIR",
		"Print {runInfo, benchmarks, evaluations} as JSON, from a run tree or a run fetched from GitHub; rows read but\n"+
			"not normalized are counted on stderr. No database is read.", 1)
	runID := s.id("run-id", "fetch this run from GitHub instead of reading a tree", "INGEST_RUN_ID")
	repo := s.repo("repo", "SemiAnalysisAI/InferenceX", "repository of the run (OWNER/NAME)", "INGEST_REPO")
	catalogFiles := s.str("catalog", "", "comma-separated alias-table extension files", "INGEST_CATALOG")
	gh := addGitHub(s).addDownloads(s)
	run(func(ctx context.Context, positional []string) int {
		return runPreview(ctx, a.env, runID.int64(), repo, catalogFiles, gh, positional)
	})
	return cmd
}

func runPreview(ctx context.Context, env Env, id int64, repo, catalogFiles *setting, gh *githubOpts, positional []string) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ingest preview: "+format+"\n", a...)
		return ExitUsage
	}
	if (len(positional) == 1) == (id != 0) {
		return usageErr("give either a run tree (DIR) or --run-id")
	}
	exts, closeExts, err := readFiles(catalogFiles.String())
	if err != nil {
		return usageErr("--catalog: %v", err)
	}
	cat, err := catalog.Load(exts...)
	closeExts()
	if err != nil {
		return usageErr("--catalog: %v", err)
	}
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(env.Stderr), zap.WarnLevel))
	dir := ""
	if len(positional) == 1 {
		dir = positional[0]
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return usageErr("the run tree %q is not a directory", dir)
		}
	} else {
		gopts, err := gh.options(env, repo.String(), "a token with actions:read")
		if err != nil {
			return usageErr("%v", err)
		}
		gopts.Log = log
		client, err := github.New(gopts)
		if err != nil {
			return usageErr("%v", err)
		}
		res, err := client.Fetch(ctx, github.Request{SourceRunID: id})
		if err != nil {
			return fail(env, "fetch run %d: %v", id, err)
		}
		dir = res.Dir
	}
	tree, err := source.Open(ctx, dir, log)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer tree.Close()
	out, left, err := preview.Build(tree, tree.Run, benchmark.NewNormalizer(cat), time.Now())
	if err != nil {
		return fail(env, "%v", err)
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintf(env.Stderr, "ingest preview: %d benchmark rows, %d eval rows%s%s\n", len(out.Benchmarks), len(out.Evaluations),
		leftText("benchmark", left.BenchmarkRows), leftText("eval", left.EvalRows))
	for _, f := range left.Files {
		fmt.Fprintln(env.Stderr, "ingest preview: not read:", f)
	}
	if left.NoBenchmarks != "" {
		fmt.Fprintln(env.Stderr, "ingest preview: no benchmark rows:", left.NoBenchmarks)
	}
	if left.NoEvals != "" {
		fmt.Fprintln(env.Stderr, "ingest preview: no eval rows:", left.NoEvals)
	}
	return ExitOK
}

// leftText lists rows left out, by reason.
func leftText(kind string, m map[string]int) string {
	reasons := slices.Sorted(maps.Keys(m))
	s := ""
	for _, r := range reasons {
		s += fmt.Sprintf("; %d %s rows %s", m[r], kind, r)
	}
	return s
}
