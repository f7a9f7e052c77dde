package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// Status renders `ingest status`: the backfill passes (unfinished first),
// then the newest ledger rows with each report's headline counts.
func Status(w io.Writer, ingests []schema.IngestRecord, backfills []schema.BackfillInfo) error {
	var b strings.Builder
	if len(backfills) > 0 {
		b.WriteString("Backfill passes\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PASS\tREPO\tSTARTED (UTC)\tSTATE\tRUNS\tINGESTED\tSKIPPED\tFAILED\tPENDING")
		for _, bf := range backfills {
			state := "finished " + stamp(bf.Pass.FinishedAt)
			if bf.Pass.FinishedAt.IsZero() {
				state = "active"
			}
			if bf.Pass.Reingest {
				state += " (reingest)"
			}
			c := bf.Counts
			fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", bf.Pass.ID, plainInline(bf.Pass.Repo), stamp(bf.Pass.StartedAt),
				state, c.Total, c.Ingested, c.Skipped, c.Failed, c.Pending)
		}
		tw.Flush()
		b.WriteString("\n")
	}
	if len(ingests) == 0 {
		b.WriteString("No ingest is recorded in the ledger.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("Recent ingests, newest first (rows: new/duplicate)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INGEST\tRUN\tATTEMPT\tSTATUS\tSTARTED (UTC)\tDURATION\tBENCHMARK\tEVAL\tTRACE\tPOWER\tFAILED\tVIA")
	for _, r := range ingests {
		bench, eval, trace, power, failed := "-", "-", "-", "-", "-"
		if s := r.Summary; s != nil && r.Status != schema.StatusAborted {
			bench, eval, trace, power = newDup(s.Rows.Benchmark), newDup(s.Rows.Eval), newDup(s.Rows.Trace), newDup(s.Rows.Power)
			failed = fmt.Sprint(s.FailureCount())
		}
		fmt.Fprintf(tw, "#%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.RunID, r.Attempt, r.Status, stamp(r.StartedAt),
			duration(r), bench, eval, trace, power, failed, via(r))
	}
	tw.Flush()
	for _, r := range ingests {
		if r.Status == schema.StatusAborted && r.Error != "" {
			fmt.Fprintf(&b, "\n#%d aborted: %s", r.ID, plainInline(r.Error))
		}
	}
	if hasAborted(ingests) {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RunHistory renders `ingest status --run-id N`: every ingest of one run,
// newest first, each with its full row counts.
func RunHistory(w io.Writer, runID int64, ingests []schema.IngestRecord) error {
	var b strings.Builder
	if len(ingests) == 0 {
		fmt.Fprintf(&b, "No ingest of run %d is recorded in the ledger.\n", runID)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Run %d: %s, newest first\n", runID, wording.Plural(len(ingests), "ingest", "ingests"))
	for _, r := range ingests {
		fmt.Fprintf(&b, "\n#%d  %s attempt %d  %s  started %s  took %s  into %s", r.ID, plainInline(r.Repo), r.Attempt, r.Status,
			stamp(r.StartedAt), duration(r), plainInline(r.Target))
		if r.MergeRunID != 0 && r.MergeRunID != r.RunID {
			fmt.Fprintf(&b, "  merge run %d attempt %d", r.MergeRunID, r.MergeRunAttempt)
		}
		if r.BackfillID != 0 {
			fmt.Fprintf(&b, "  by backfill pass #%d", r.BackfillID)
		}
		if r.ToolVersion != "" {
			fmt.Fprintf(&b, "  (ingest %s)", plainInline(r.ToolVersion))
		}
		b.WriteString("\n")
		if r.Status == schema.StatusAborted {
			fmt.Fprintf(&b, "  aborted, nothing written: %s\n", plainInline(r.Error))
			continue
		}
		s := r.Summary
		if s == nil {
			b.WriteString("  no report stored\n")
			continue
		}
		b.WriteString(TextTable(s.Rows, "  "))
		fmt.Fprintf(&b, "  eval samples new %d, GPU metric samples new %d, changelog entries %d, failures %d\n",
			s.Stats.EvalSamplesNew, s.Stats.GPUMetricSamplesNew, s.Stats.ChangelogEntriesWritten, s.FailureCount())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func newDup(c schema.Counts) string { return fmt.Sprintf("%d/%d", c.New, c.Duplicate) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func duration(r schema.IngestRecord) string {
	if r.FinishedAt.IsZero() {
		return "-"
	}
	d := r.Duration
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func via(r schema.IngestRecord) string {
	if r.BackfillID != 0 {
		return fmt.Sprintf("backfill #%d", r.BackfillID)
	}
	return "-"
}

func hasAborted(rs []schema.IngestRecord) bool {
	for _, r := range rs {
		if r.Status == schema.StatusAborted && r.Error != "" {
			return true
		}
	}
	return false
}

// statusIngest is one ledger row in `ingest status --format json`.
type statusIngest struct {
	ID              int64         `json:"ingestId"`
	Repo            string        `json:"repo"`
	RunID           int64         `json:"runId"`
	Attempt         int           `json:"attempt"`
	MergeRunID      int64         `json:"mergeRunId,omitempty"`
	MergeRunAttempt int           `json:"mergeRunAttempt,omitempty"`
	Status          schema.Status `json:"status"`
	Target          string        `json:"target"`
	StartedAt       time.Time     `json:"startedAt"`
	FinishedAt      *time.Time    `json:"finishedAt"`
	DurationMS      int64         `json:"durationMs"`
	Error           string        `json:"error,omitempty"`
	ToolVersion     string        `json:"toolVersion"`
	BackfillID      int64         `json:"backfillPass,omitempty"`
	Rows            *schema.Rows  `json:"rows,omitempty"`
	Failures        *int64        `json:"failures,omitempty"`
	Stats           *statusStats  `json:"stats,omitempty"`
}

type statusStats struct {
	EvalSamplesNew          int64 `json:"evalSamplesNew"`
	GPUMetricSamplesNew     int64 `json:"gpuMetricSamplesNew"`
	ChangelogEntriesWritten int64 `json:"changelogEntriesWritten"`
}

type statusBackfill struct {
	ID         int64                 `json:"pass"`
	Repo       string                `json:"repo"`
	Reingest   bool                  `json:"reingest"`
	StartedAt  time.Time             `json:"startedAt"`
	FinishedAt *time.Time            `json:"finishedAt"`
	Counts     schema.BackfillCounts `json:"runs"`
}

// StatusJSON renders `ingest status --format json`; views, when given,
// are the refresh states of the materialized views.
func StatusJSON(w io.Writer, ingests []schema.IngestRecord, backfills []schema.BackfillInfo, views []schema.ViewState) error {
	out := struct {
		Backfills []statusBackfill   `json:"backfills"`
		Ingests   []statusIngest     `json:"ingests"`
		Views     []schema.ViewState `json:"views,omitempty"`
	}{Backfills: []statusBackfill{}, Ingests: []statusIngest{}, Views: views}
	for _, b := range backfills {
		sb := statusBackfill{ID: b.Pass.ID, Repo: b.Pass.Repo, Reingest: b.Pass.Reingest, StartedAt: b.Pass.StartedAt, Counts: b.Counts}
		if !b.Pass.FinishedAt.IsZero() {
			t := b.Pass.FinishedAt
			sb.FinishedAt = &t
		}
		out.Backfills = append(out.Backfills, sb)
	}
	for _, r := range ingests {
		si := statusIngest{ID: r.ID, Repo: r.Repo, RunID: r.RunID, Attempt: r.Attempt, MergeRunID: r.MergeRunID,
			MergeRunAttempt: r.MergeRunAttempt, Status: r.Status, Target: r.Target, StartedAt: r.StartedAt,
			DurationMS: r.Duration.Milliseconds(), Error: r.Error, ToolVersion: r.ToolVersion, BackfillID: r.BackfillID}
		if !r.FinishedAt.IsZero() {
			t := r.FinishedAt
			si.FinishedAt = &t
		}
		if s := r.Summary; s != nil && r.Status != schema.StatusAborted {
			rows, failures := s.Rows, s.FailureCount()
			si.Rows, si.Failures = &rows, &failures
			si.Stats = &statusStats{EvalSamplesNew: s.Stats.EvalSamplesNew, GPUMetricSamplesNew: s.Stats.GPUMetricSamplesNew,
				ChangelogEntriesWritten: s.Stats.ChangelogEntriesWritten}
		}
		out.Ingests = append(out.Ingests, si)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
