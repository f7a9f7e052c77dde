package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// verifyCheck is one check of `ingest verify` and its outcome.
type verifyCheck struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// verifyCommand reads a stored run back and checks it against the ledger:
// the rows each table holds against what the run's ingests reported
// writing, every row's ingest and source artifact against the ledger's
// records, and the run's points in latest_benchmarks against the curves
// recomputed by the rules. Exit 0 when every check holds, 1 otherwise.
func (a *app) verifyCommand() *cobra.Command {
	cmd, s, run := a.command("verify --run-id N",
		"read a stored run back and check it against the ledger and latest_benchmarks: ingest verify --run-id N",
		"Read a stored run back and check its rows against the ledger and its points in latest_benchmarks against the\n"+
			"curve rules. Exit 0 when every check holds, 1 otherwise.", 0)
	common := addCommon(s)
	runID := s.id("run-id", "GitHub workflow run id (required)", "INGEST_RUN_ID")
	repo := s.repo("repo", "SemiAnalysisAI/InferenceX", "repository the run belongs to (OWNER/NAME)", "INGEST_REPO")
	format := s.enum("format", report.FormatText, []string{report.FormatText, report.FormatJSON}, "output format", "INGEST_VERIFY_FORMAT")
	run(func(ctx context.Context, _ []string) int {
		return runVerify(ctx, a.env, common, runID.int64(), repo, format)
	})
	return cmd
}

func runVerify(ctx context.Context, env Env, common *commonOpts, id int64, repo, format *setting) int {
	if id == 0 {
		fmt.Fprintln(env.Stderr, "ingest verify: --run-id is required")
		return ExitUsage
	}
	st, _, code := connectSchema(ctx, common, env) // reads, and rolls back its recompute
	if st == nil {
		return code
	}
	defer st.Close()
	rb, err := st.ReadBackRun(ctx, repo.String(), id, benchmark.StoredDocuments{})
	if err != nil {
		return fail(env, "%v", err)
	}
	checks := verifyChecks(rb, id, common.target.name)
	ok := true
	for _, c := range checks {
		ok = ok && c.OK
	}
	if format.String() == report.FormatJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			RunID  int64         `json:"runId"`
			Target string        `json:"target"`
			OK     bool          `json:"ok"`
			Checks []verifyCheck `json:"checks"`
		}{id, common.target.name, ok, checks})
	} else {
		verdict := "verified"
		if !ok {
			verdict = "MISMATCH"
		}
		_, err = fmt.Fprintf(env.Stdout, "Run %d in the %s database: %s\n", id, common.target.name, verdict)
		for _, c := range checks {
			mark := "ok      "
			if !c.OK {
				mark = "MISMATCH"
			}
			if _, werr := fmt.Fprintf(env.Stdout, "  %s  %s: %s\n", mark, c.Check, c.Detail); werr != nil && err == nil {
				err = werr
			}
		}
	}
	if err != nil {
		return fail(env, "%v", err)
	}
	if !ok {
		return ExitAborted
	}
	return ExitOK
}

// verifyChecks judges what was read back.
func verifyChecks(rb schema.RunReadBack, runID int64, target string) []verifyCheck {
	var checks []verifyCheck
	switch {
	case len(rb.Ingests) > 0:
		last := rb.Ingests[len(rb.Ingests)-1]
		checks = append(checks, verifyCheck{Check: "ledger", OK: true,
			Detail: fmt.Sprintf("%d finished ingests, the newest #%d (%s)", len(rb.Ingests), last.IngestID, last.Status)})
	case rb.AdoptedRun:
		checks = append(checks, verifyCheck{Check: "ledger", OK: true,
			Detail: "adopted from the reference ingest (ingest adopt), not ingested since"})
	default:
		return []verifyCheck{{Check: "ledger", Detail: fmt.Sprintf("no finished ingest of run %d in the %s ledger", runID, target)}}
	}
	if rb.AdoptedRun && len(rb.Ingests) > 0 {
		checks[0].Detail += "; adopted from the reference ingest before"
	}
	// The rows adopt took over were written by no ingest of ours: they
	// count beside what the ingests reported writing.
	var reported = map[string]int64{}
	for table, n := range rb.Adopted {
		reported[table] += n
	}
	for _, s := range rb.Ingests {
		reported["benchmark_results"] += s.Rows.Benchmark.New
		reported["eval_results"] += s.Rows.Eval.New
		reported["run_stats"] += s.Stats.RunStatsNew
	}
	for _, table := range []string{"benchmark_results", "eval_results", "run_stats"} {
		c := verifyCheck{Check: table + " count"}
		switch stored := rb.Stored[table]; {
		case rb.OverridesTouched:
			c.OK = true
			c.Detail = fmt.Sprintf("%d stored; not compared: run overrides deleted or rewrote stored rows of the run", stored)
		case table == "run_stats" && rb.AdoptedRun && len(rb.Ingests) > 0:
			// qUpsertRunStats: an adopted per-GPU row gives way to the
			// run's per-cluster rows of that GPU, counted as duplicates.
			c.OK = true
			c.Detail = fmt.Sprintf("%d stored; not compared: an ingest of an adopted run replaces the reference's per-GPU rows "+
				"by per-cluster rows and counts those duplicates", stored)
		case stored == reported[table] && rb.Adopted[table] > 0:
			c.OK = true
			c.Detail = fmt.Sprintf("%d stored: %d adopted, %d as the ingests reported writing", stored, rb.Adopted[table],
				stored-rb.Adopted[table])
		case stored == reported[table]:
			c.OK = true
			c.Detail = fmt.Sprintf("%d stored, as the ingests reported writing", stored)
		default:
			c.Detail = fmt.Sprintf("%d stored, the ingests reported writing %d", stored, reported[table])
		}
		checks = append(checks, c)
		p := verifyCheck{Check: table + " provenance", OK: rb.ForeignIngest[table] == 0 && rb.UnrecordedArtifact[table] == 0}
		if p.OK {
			p.Detail = "every row names a finished ingest of the run and an artifact it recorded"
		} else {
			p.Detail = fmt.Sprintf("%d rows name no finished ingest of the run, %d an artifact their ingest did not record",
				rb.ForeignIngest[table], rb.UnrecordedArtifact[table])
		}
		checks = append(checks, p)
	}
	checks = append(checks, contentCheck(rb), samplesCheck(rb))
	lb := verifyCheck{Check: "latest_benchmarks", OK: slices.Equal(rb.Shown, rb.Expected)}
	if lb.OK {
		lb.Detail = fmt.Sprintf("serves %d points of the run, as the curve rules do", len(rb.Shown))
	} else {
		missing, extra := idDiff(rb.Expected, rb.Shown), idDiff(rb.Shown, rb.Expected)
		lb.Detail = fmt.Sprintf("serves %d points of the run, the curve rules %d: %d missing (ids %v), %d not due (ids %v); run \"ingest refresh\"",
			len(rb.Shown), len(rb.Expected), len(missing), firstIDs(missing), len(extra), firstIDs(extra))
	}
	return append(checks, lb)
}

// contentCheck judges the recomputed content digests of the run's
// benchmark rows: a row whose stored key or values changed since its
// ingest wrote them no longer hashes to its digest.
func contentCheck(rb schema.RunReadBack) verifyCheck {
	c, n := verifyCheck{Check: "benchmark_results content"}, rb.Content
	derived := ""
	if n.Derived > 0 {
		derived = fmt.Sprintf("; %d rows holding values derived after the write, or adopted, not recomputed", n.Derived)
	}
	switch {
	case rb.OverridesTouched:
		c.OK = true
		c.Detail = fmt.Sprintf("%d rows, %d no longer hashing to their digest; not compared: run overrides rewrote stored rows of the run",
			n.Checked, n.Mismatched)
	case n.Mismatched == 0:
		c.OK = true
		c.Detail = fmt.Sprintf("every one of %d rows hashes to its digest (its key and values as written)%s", n.Checked, derived)
	default:
		c.Detail = fmt.Sprintf("%d of %d rows no longer hash to their digest (key or values changed since written): %s%s",
			n.Mismatched, n.Checked, strings.Join(n.Mismatches, "; "), more(n.Mismatched, len(n.Mismatches)))
	}
	return c
}

// samplesCheck judges the samples the run's eval rows hold against the
// lines their ingest recorded.
func samplesCheck(rb schema.RunReadBack) verifyCheck {
	c, n := verifyCheck{Check: "eval_samples count"}, rb.Samples
	if n.Mismatched == 0 {
		c.OK = true
		c.Detail = fmt.Sprintf("every one of %d eval rows with a recorded samples file holds its %d samples", n.Checked, n.Samples)
		return c
	}
	c.Detail = fmt.Sprintf("%d of %d eval rows hold another number of samples than their ingest recorded: %s%s",
		n.Mismatched, n.Checked, strings.Join(n.Mismatches, "; "), more(n.Mismatched, len(n.Mismatches)))
	return c
}

// more says how many of n were left unnamed.
func more(n int64, named int) string {
	if n <= int64(named) {
		return ""
	}
	return fmt.Sprintf("; and %d more", n-int64(named))
}

// idDiff is the ids of a not in b (both sorted).
func idDiff(a, b []int64) []int64 {
	var out []int64
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

// firstIDs is at most ten ids, for a message.
func firstIDs(ids []int64) []int64 { return ids[:min(10, len(ids))] }
