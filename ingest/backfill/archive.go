package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// Archive is the artifact archive an archive source lists runs from.
type Archive interface {
	Runs(ctx context.Context) ([]archive.Run, error)
	Contents(ctx context.Context, runID int64) (*schema.ArchivedRun, error)
}

// ArchiveSource backfills the runs an artifact archive holds, fetched
// through a GitHub client that reads the archive (Source archive: the
// archive alone; auto: GitHub for what it still has).
type ArchiveSource struct {
	Archive Archive
	Client  RunFetcher
	Source  github.Source
	// Since and Until bound the runs by their archive date (zero: open).
	Since, Until  time.Time
	KeepDownloads bool
	Log           *zap.Logger
}

// NotSweepPrefix starts the reason of an archived run skipped because
// none of its artifacts is one the ingest reads (another workflow's run).
const NotSweepPrefix = "not a sweep: "

// List lists the archive's runs; their attempt is unknown (any ingested
// attempt of a run counts as present).
func (a *ArchiveSource) List(ctx context.Context) ([]schema.BackfillRun, error) {
	runs, err := a.Archive.Runs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]schema.BackfillRun, 0, len(runs))
	for _, r := range runs {
		if !a.Since.IsZero() && r.Date.Before(a.Since.Truncate(24*time.Hour)) || !a.Until.IsZero() && r.Date.After(a.Until) {
			continue
		}
		out = append(out, schema.BackfillRun{RunID: r.ID, CreatedAt: r.Date})
	}
	return out, nil
}

// Fetch fetches the run as `ingest run --source` does; a run none of whose
// artifacts the ingest reads is skipped before any download.
func (a *ArchiveSource) Fetch(ctx context.Context, run schema.BackfillRun) (*Fetched, error) {
	c, err := a.Archive.Contents(ctx, run.RunID)
	if err != nil {
		return nil, err
	}
	if c != nil && !sweep(c.Uploads) {
		return &Fetched{Skip: fmt.Sprintf("%sno benchmark, eval or changelog artifact among its %d", NotSweepPrefix, len(c.Uploads))}, nil
	}
	req := github.Request{SourceRunID: run.RunID, Source: a.Source}
	if a.Source == github.SourceArchive {
		req.Archived = c // listed just now: not listed again
	}
	res, err := a.Client.Fetch(ctx, req)
	switch {
	case errors.Is(err, github.ErrNoArtifacts):
		return &Fetched{Skip: err.Error()}, nil
	case err != nil:
		return nil, err
	}
	return fetched(run.RunID, res, a.Client, a.KeepDownloads), nil
}

// sweep reports whether any upload is one the ingest reads.
func sweep(uploads []schema.ArtifactListing) bool {
	for _, u := range uploads {
		switch runstate.Classify(u.Name) {
		case runstate.KindOther, runstate.KindRejectedRows:
		default:
			return true
		}
	}
	return false
}

// Month is one month of a backfill's runs, by their creation time.
type Month struct {
	Month     string // YYYY-MM, or "unknown"
	Found     int
	Ingested  int
	Present   int // already ingested by an earlier ingest
	Purged    int
	NotSweep  int
	NoBench   int // ingested, but with no benchmark data
	Skipped   int // skipped for another reason
	Failed    int
	Pending   int
	Failures  []schema.BackfillSettled
	OtherSkip []schema.BackfillSettled
}

// NoBenchmarkPrefix starts the detail of an ingested run that had no
// benchmark data.
const NoBenchmarkPrefix = "no benchmark data: "

// Months groups a pass's runs (Queue.BackfillRuns) by month.
func Months(runs []schema.BackfillSettled) []Month {
	var out []Month
	at := map[string]int{}
	for _, r := range runs {
		key := "unknown"
		if !r.CreatedAt.IsZero() {
			key = r.CreatedAt.UTC().Format("2006-01")
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Month{Month: key})
		}
		m := &out[i]
		m.Found++
		switch {
		case r.State == schema.BackfillPending:
			m.Pending++
		case r.State == schema.BackfillFailed:
			m.Failed++
			m.Failures = append(m.Failures, r)
		case r.State == schema.BackfillIngested && strings.HasPrefix(r.Detail, NoBenchmarkPrefix):
			m.NoBench++
		case r.State == schema.BackfillIngested:
			m.Ingested++
		case strings.HasPrefix(r.Detail, alreadyIngestedPrefix):
			m.Present++
		case strings.Contains(r.Detail, "purged by the run overrides"):
			m.Purged++
		case strings.HasPrefix(r.Detail, NotSweepPrefix):
			m.NotSweep++
		default:
			m.Skipped++
			m.OtherSkip = append(m.OtherSkip, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Month) int { return strings.Compare(a.Month, b.Month) })
	return out
}

// WriteMonths writes the per-month table of an archive backfill, and the
// reason of every failed run.
func WriteMonths(w io.Writer, archiveURL string, months []Month) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe archive %s, by month of the runs:\n\n", archiveURL)
	b.WriteString("| month | in the archive | ingested | already present | skipped: purged | skipped: not a sweep | no benchmark data | skipped: other | failed | pending |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	var failures, others []schema.BackfillSettled
	for _, m := range months {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", m.Month, m.Found, m.Ingested, m.Present, m.Purged, m.NotSweep,
			m.NoBench, m.Skipped, m.Failed, m.Pending)
		failures = append(failures, m.Failures...)
		others = append(others, m.OtherSkip...)
	}
	writeSettled(&b, "Failed runs, by month:", failures)
	writeSettled(&b, "Runs skipped for another reason:", others)
	_, err := io.WriteString(w, b.String())
	return err
}
