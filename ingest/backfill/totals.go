package backfill

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// Totals add up what one worker did.
type Totals struct {
	Ingested int
	// WithFailures counts ingested runs that completed with failures.
	WithFailures        int
	Skipped             int
	Failed              int
	Rows                schema.Rows
	EvalSamplesNew      int64
	GPUMetricSamplesNew int64
	ChangelogEntries    int64
	// IngestTime is the time spent on settled runs.
	IngestTime time.Duration
}

// Runs is the number of runs the worker settled.
func (t Totals) Runs() int { return t.Ingested + t.Skipped + t.Failed }

func (t *Totals) add(out schema.BackfillOutcome, sum *schema.Summary) {
	t.IngestTime += out.Duration
	switch out.State {
	case schema.BackfillIngested:
		t.Ingested++
		if out.IngestStatus == schema.StatusCompletedWithFailures {
			t.WithFailures++
		}
	case schema.BackfillSkipped:
		t.Skipped++
	case schema.BackfillFailed:
		t.Failed++
	}
	if sum == nil || out.State != schema.BackfillIngested {
		return
	}
	t.Rows.Add(sum.Rows)
	t.EvalSamplesNew += sum.Stats.EvalSamplesNew
	t.GPUMetricSamplesNew += sum.Stats.GPUMetricSamplesNew
	t.ChangelogEntries += sum.Stats.ChangelogEntriesWritten
}

// WriteResult prints the closing table of a worker: its totals, the rows
// its ingests reported, and where the pass stands with its failed runs.
func WriteResult(w io.Writer, r *Result, worker string) error {
	var b strings.Builder
	t := r.Totals
	fmt.Fprintf(&b, "Backfill pass #%d of %s", r.Pass.ID, r.Pass.Repo)
	if r.Pass.Reingest {
		b.WriteString(" (reingest)")
	}
	fmt.Fprintf(&b, ": worker %s", worker)
	if r.Interrupted {
		b.WriteString(", interrupted")
	}
	fmt.Fprintf(&b, "\n\nThis worker listed %d runs and queued %d", r.Listed, r.Queued[schema.BackfillPending])
	var settledAtOnce []string
	if n := r.Queued[schema.BackfillSkipped]; n > 0 {
		settledAtOnce = append(settledAtOnce, fmt.Sprintf("%d skipped: already ingested, or not completed", n))
	}
	if n := r.Queued[schema.BackfillFailed]; n > 0 {
		settledAtOnce = append(settledAtOnce, fmt.Sprintf("%d failed: could not be looked up", n))
	}
	if len(settledAtOnce) > 0 {
		fmt.Fprintf(&b, " (and settled at once %s)", strings.Join(settledAtOnce, "; "))
	}
	fmt.Fprintf(&b, ".\nIt worked on %d runs in %s: %d ingested", t.Runs(), r.Took.Round(time.Millisecond), t.Ingested)
	if t.WithFailures > 0 {
		fmt.Fprintf(&b, " (%d completed with failures)", t.WithFailures)
	}
	fmt.Fprintf(&b, ", %d skipped, %d failed\n\n", t.Skipped, t.Failed)

	b.WriteString(report.TextTable(t.Rows, "  "))
	fmt.Fprintf(&b, "\nNew eval samples %d, new GPU metric samples %d, changelog entries written %d.\n",
		t.EvalSamplesNew, t.GPUMetricSamplesNew, t.ChangelogEntries)

	c := r.Counts
	fmt.Fprintf(&b, "\nThe pass, every worker: %d runs: %d ingested, %d skipped, %d failed, %d pending",
		c.Total, c.Ingested, c.Skipped, c.Failed, c.Pending)
	switch {
	case r.Finished:
		b.WriteString(": finished.\n")
	case c.Pending > 0:
		b.WriteString(": not finished (other workers hold runs, or rerun the same command to resume).\n")
	default:
		b.WriteString(".\n")
	}
	writeSettled(&b, "Failed runs (a later pass retries them):", r.Failures)
	writeSettled(&b, "Runs that cannot be ingested now (skipped):", r.NotIngestable)
	_, err := io.WriteString(w, b.String())
	return err
}

// PlannedRun is what a backfill would do with one run.
type PlannedRun struct {
	Run    schema.BackfillRun
	Action string
}

// Plan lists what a backfill with these parameters would do, oldest run
// first, without writing anything: the --dry-run of `ingest backfill`.
// When a pass of these parameters is open, its settled runs are shown as
// such: rerunning the command resumes that pass and leaves them alone.
func Plan(ctx context.Context, p Params, q Queue, src Source) ([]PlannedRun, error) {
	spec, err := p.Spec()
	if err != nil {
		return nil, err
	}
	pass, open, err := q.ActiveBackfill(ctx, spec.Key)
	if err != nil {
		return nil, err
	}
	settled := map[int64]schema.BackfillSettled{}
	if open {
		list, err := q.BackfillSettled(ctx, pass.ID, schema.BackfillIngested, schema.BackfillSkipped, schema.BackfillFailed)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			settled[s.RunID] = s
		}
	}
	runs, err := src.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the runs: %w", err)
	}
	sortOldestFirst(runs)
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	after := int64(0)
	if open && pass.Reingest {
		after = pass.LedgerMark
	}
	hits, err := q.LedgerHits(ctx, p.Repo, ids, after)
	if err != nil {
		return nil, err
	}
	out := make([]PlannedRun, len(runs))
	for i, r := range runs {
		pr := PlannedRun{Run: r, Action: "ingest"}
		h, seen := hits[r.RunID][r.Attempt]
		s, done := settled[r.RunID]
		switch {
		case done:
			pr.Action = fmt.Sprintf("settled in open pass #%d: %s", pass.ID, s.State)
			if s.Detail != "" {
				pr.Action += ": " + s.Detail
			}
		case r.State == schema.BackfillSkipped:
			pr.Action = "skip: " + r.Detail
		case r.State == schema.BackfillFailed:
			pr.Action = "fail: " + r.Detail
		case seen && p.Reingest && !open:
			pr.Action = fmt.Sprintf("ingest again (attempt %d was ingested by ingest #%d)", h.Attempt, h.IngestID)
		case seen:
			pr.Action = "skip: " + alreadyIngested(h)
		case open:
			pr.Action = fmt.Sprintf("ingest (resuming open pass #%d)", pass.ID)
		}
		out[i] = pr
	}
	return out, nil
}

// WritePlan prints a plan as a table and a count of what would be done.
func WritePlan(w io.Writer, plan []PlannedRun) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tATTEMPT\tCREATED (UTC)\tACTION")
	ingest := 0
	for _, p := range plan {
		created, attempt := "-", "-"
		if !p.Run.CreatedAt.IsZero() {
			created = p.Run.CreatedAt.UTC().Format("2006-01-02 15:04:05")
		}
		if p.Run.Attempt > 0 {
			attempt = fmt.Sprint(p.Run.Attempt)
		}
		if strings.HasPrefix(p.Action, "ingest") {
			ingest++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", p.Run.RunID, attempt, created, p.Action)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ndry run: %d of %d runs would be ingested, oldest first; nothing was written.\n", ingest, len(plan))
	return err
}

// maxListed bounds each list of runs in the closing table.
const maxListed = 100

func writeSettled(b *strings.Builder, title string, runs []schema.BackfillSettled) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	for i, f := range runs {
		if i == maxListed {
			fmt.Fprintf(b, "  … and %d more (ingest status, or the backfill_runs table)\n", len(runs)-maxListed)
			break
		}
		fmt.Fprintf(b, "  run %d attempt %d", f.RunID, f.Attempt)
		if f.IngestID != 0 {
			fmt.Fprintf(b, " (ingest #%d)", f.IngestID)
		}
		fmt.Fprintf(b, ": %s\n", f.Detail)
	}
}
