package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/store"
)

// adoptCommand takes over a database the reference ingest (InferenceX-app)
// owns: its tables are converted into ours in one transaction
// (store.Store.Adopt). --dry-run prints the plan and changes nothing.
func (a *app) adoptCommand() *cobra.Command {
	cmd, s, run := a.command("adopt", "take over a database the reference ingest owns: ingest adopt [--dry-run]",
		"Convert a database the reference ingest (InferenceX-app) owns into this program's schema, in place and in one\n"+
			"transaction: every row the site reads keeps its id and values (the AgentX trace payloads are computed\n"+
			"from the stored blobs by this program's trace code), the reference's tables move to the schema\n"+
			"reference_archive (the way back), user_feedback and the reference's schema_migrations stay as they are.\n"+
			"A schema at a level adopt does not know, or rows our constraints refuse, are refused with nothing written.\n"+
			"--dry-run prints what was found and what would be converted, and changes nothing. Take a pg_dump first\n"+
			"(docs/operations.md, \"Switching from the reference ingest\").", 0)
	common := addCommon(s)
	dryRun := s.flag("dry-run", "print the plan (tables, rows, bytes, an estimate of time) and change nothing", "INGEST_DRY_RUN")
	repo := s.repo("repo", "SemiAnalysisAI/InferenceX", "repository the reference ingested (recorded on every adopted run)", "INGEST_REPO")
	run(func(ctx context.Context, _ []string) int {
		return runAdopt(ctx, a.env, common, *dryRun, repo.String())
	})
	return cmd
}

func runAdopt(ctx context.Context, env Env, common *commonOpts, dryRun bool, repo string) int {
	// Not connect: the database is one this program does not own yet.
	log, err := newLogger(common, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return ExitUsage
	}
	*common.noMigrate = true
	st, err := openStore(ctx, common, log, false)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	if errors.Is(err, store.ErrAdoptRefused) {
		fmt.Fprintf(env.Stderr, "ingest adopt: %v\n", err)
		return ExitUsage
	}
	if err != nil {
		return fail(env, "%v", err)
	}
	printAdoptPlan(env.Stdout, plan, dryRun)
	if len(plan.Refusals) > 0 {
		fmt.Fprintf(env.Stderr, "ingest adopt: refused, nothing was changed:\n  %s\n", strings.Join(plan.Refusals, "\n  "))
		return ExitUsage
	}
	if dryRun {
		fmt.Fprintln(env.Stdout, "dry run: nothing was changed")
		return ExitOK
	}
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: repo, ToolVersion: toolVersion(env.Version)})
	if err != nil {
		return fail(env, "%v", err)
	}
	printAdoptResult(env.Stdout, plan, res)
	return ExitOK
}

func printAdoptPlan(w io.Writer, p store.AdoptPlan, dryRun bool) {
	verb := "converts"
	if dryRun {
		verb = "would convert"
	}
	fmt.Fprintf(w, "found the reference ingest's schema: %d migration files, newest %s\n", len(p.Files), p.Newest)
	fmt.Fprintf(w, "  features: append-only curves %s, recipe fingerprint %s, server log files %s, power provenance %s, GPU metrics %s, "+
		"kv_transfer_lib %s, measurement snapshots %s\n",
		yesNo(p.AppendOnly), yesNo(p.Fingerprint), yesNo(p.LogFiles), yesNo(p.Power), yesNo(p.GPU), yesNo(p.KVTransferLib), yesNo(p.Snapshots))
	fmt.Fprintf(w, "adopt %s these tables (then moved to schema reference_archive):\n", verb)
	for _, t := range p.Tables {
		fmt.Fprintf(w, "  %-30s %12d rows %12s\n", t.Name, t.Rows, mebibytes(t.Bytes))
	}
	fmt.Fprintln(w, "left in public as they are:")
	for _, t := range p.Kept {
		fmt.Fprintf(w, "  %-30s %12d rows %12s\n", t.Name, t.Rows, mebibytes(t.Bytes))
	}
	if p.KVTransferLibValues > 0 {
		fmt.Fprintf(w, "%d benchmark_results name their kv_transfer_lib: kept on the rows\n", p.KVTransferLibValues)
	}
	if p.EvalMerges > 0 {
		fmt.Fprintf(w, "%d eval_results share a key (isl, osl or conc NULL) with a newer row: merged into it, with the documents only they hold\n", p.EvalMerges)
	}
	if p.TracesWithoutProfile > 0 {
		fmt.Fprintf(w, "%d AgentX trace(s) have no profile export: adopted without one, with the reference's payloads\n", p.TracesWithoutProfile)
	}
	if p.GPU {
		fmt.Fprintln(w, "GPU metrics: series, digests and links copied with their ids, samples packed into gpu_metric_sample_chunks")
	}
	fmt.Fprintf(w, "total %s; estimated time %s (one transaction: the site reads on, the reference ingest's writes wait)\n",
		mebibytes(p.TotalBytes()), p.Estimate)
}

func printAdoptResult(w io.Writer, p store.AdoptPlan, r store.AdoptResult) {
	fmt.Fprintf(w, "adopted in %s:\n", r.Duration.Round(time.Millisecond))
	for _, t := range []string{"configs", "workflow_runs", "ingests", "benchmark_results", "run_stats", "eval_results",
		"eval_samples", "eval_sample_texts", "changelog_entries", "availability", "server_logs", "server_log_files",
		"server_log_texts", "agentic_trace_replay", "datasets", "dataset_conversations", "run_datasets", "gpu_metric_series",
		"gpu_metric_sample_chunks", "gpu_metric_gpu_stats", "benchmark_result_gpu_metrics", "benchmark_curves"} {
		fmt.Fprintf(w, "  %-30s %12d rows\n", t, r.Rows[t])
	}
	fmt.Fprintf(w, "  %-30s %12d blobs %s\n", "trace_blobs", r.Blobs, mebibytes(r.BlobBytes))
	if r.PayloadsKept > 0 {
		fmt.Fprintf(w, "%d AgentX trace(s) keep the reference's payloads: no profile export, or one our trace code could not read (the log names them)\n",
			r.PayloadsKept)
	}
	fmt.Fprintf(w, "the reference's %d tables, views and functions are in schema reference_archive; user_feedback and schema_migrations stayed in public\n",
		len(r.Moved))
	fmt.Fprintln(w, "next: run \"ingest reader create\" and point the site at that role (docs/operations.md, \"Switching from the reference ingest\")")
	fmt.Fprintln(w, "the way back: restore the pg_dump taken before adopt (it drops what this program wrote since), or move the tables of reference_archive back to public")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// mebibytes prints n bytes in MiB, one decimal.
func mebibytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
