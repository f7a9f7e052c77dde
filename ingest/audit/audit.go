// Package audit finds merged sweeps that have no successful ingest: every
// run of the sweep workflow on the default branch is matched with the
// ledger, and each one missed gets its cause and the command that recovers
// it. Runs purged on purpose are listed with their cause and never
// proposed for re-ingest. Changelog entries whose PR merged with no run
// at its merge commit are listed too (AuditChangelog).
package audit

import (
	"fmt"
	"time"

	"github.com/inferencex/ingest/ingest/wording"
)

// Run is one merged sweep: a completed run of the sweep workflow.
type Run struct {
	ID      int64
	Attempt int
	// Status is the run's status ("completed"; "" reads as completed).
	Status     string
	Conclusion string
	CreatedAt  time.Time
	// HeadSHA is the commit the run ran on (a merged PR's merge commit).
	HeadSHA string
}

// Ingest is one ledger row naming a run, as source or merge run.
type Ingest struct {
	ID         int64
	RunID      int64
	MergeRunID int64
	Status     string
	Error      string
}

// Artifacts says what GitHub still holds of a run: how many artifacts it
// lists and how many of them have expired.
type Artifacts struct {
	Listed, Expired int
}

// Causes of a missed ingest.
const (
	CausePurged       = "purged on purpose"
	CauseExpired      = "artifacts expired"
	CauseNoArtifacts  = "no artifacts"
	CauseAborted      = "ingest aborted"
	CauseRunFailed    = "run failed"
	CauseRunCancelled = "run cancelled"
	CauseNoIngest     = "no ingest"
	// CauseInProgress: the run (a re-run attempt) has not finished; it
	// is not missed yet, and nothing is proposed.
	CauseInProgress = "in progress"
)

// Rejected is an entry of the run listing the audit could not read as a
// run (no positive id, no parseable created_at, an unknown status or
// conclusion): named by its id as served, with the reason.
type Rejected struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Finding is one merged sweep without a successful ingest: a run, or a
// changelog entry no run covers (RunID 0, PR set, CreatedAt its merge).
type Finding struct {
	RunID      int64    `json:"runId"`
	Attempt    int      `json:"attempt"`
	PR         int      `json:"pr,omitempty"`
	ConfigKeys []string `json:"configKeys,omitempty"`
	// MergeCommitSHA is the changelog entry's PR merge commit.
	MergeCommitSHA string    `json:"mergeCommitSha,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	Conclusion     string    `json:"conclusion"`
	// SourceRunID is the sweep the merge run reused, when the ledger
	// knows it (an aborted ingest recorded it), else 0.
	SourceRunID int64  `json:"sourceRunId,omitempty"`
	Cause       string `json:"cause"`
	Detail      string `json:"detail,omitempty"`
	// Command recovers the run ("" when nothing can: purged, expired and
	// not in the archive).
	Command string `json:"command,omitempty"`
}

// Result is the audit of a window of merged sweeps.
type Result struct {
	Runs     int       `json:"runs"`
	Ingested int       `json:"ingested"`
	Missed   []Finding `json:"missed"`
	// Rejected are the listing's entries that are not runs: each is
	// reported, the others audited.
	Rejected []Rejected `json:"rejected"`
	// Changelog is nil when the changelog was not read (--changelog "").
	Changelog *Changelog `json:"changelog,omitempty"`
}

// Unresolved counts the findings that are neither purged on purpose nor
// in progress, and the rejected listing entries (runs not audited).
func (r Result) Unresolved() int {
	n := len(r.Rejected)
	for _, f := range r.Missed {
		if f.Cause != CausePurged && f.Cause != CauseInProgress {
			n++
		}
	}
	return n
}

// Deps are what the audit asks about a run it found missed.
type Deps struct {
	Repo string
	// Purged says whether the run overrides purge the run (and why).
	Purged func(runID int64, attempt int) (string, bool)
	// Artifacts lists what GitHub still holds of the run.
	Artifacts func(runID int64) (Artifacts, error)
	// Archive, when set, is the artifact archive compared too (its URL);
	// Archived says whether it holds a run. A run whose artifacts GitHub
	// has expired is then recoverable from the archive.
	Archive  string
	Archived func(runID int64) (bool, error)
}

// Audit matches runs (oldest first) with the ledger's ingests.
func Audit(runs []Run, ledger []Ingest, d Deps) (Result, error) {
	res := Result{Runs: len(runs), Missed: []Finding{}, Rejected: []Rejected{}}
	byRun := map[int64][]Ingest{}
	for _, in := range ledger {
		byRun[in.RunID] = append(byRun[in.RunID], in)
		if in.MergeRunID != 0 && in.MergeRunID != in.RunID {
			byRun[in.MergeRunID] = append(byRun[in.MergeRunID], in)
		}
	}
	for _, r := range runs {
		ins := byRun[r.ID]
		if succeeded(ins) {
			res.Ingested++
			continue
		}
		f := Finding{RunID: r.ID, Attempt: r.Attempt, CreatedAt: r.CreatedAt, Conclusion: r.Conclusion}
		if r.Status != "" && r.Status != "completed" {
			f.Cause, f.Detail = CauseInProgress, "status "+r.Status+": not finished, nothing to recover yet"
			res.Missed = append(res.Missed, f)
			continue
		}
		var aborted []Ingest
		for _, in := range ins {
			if in.Status == "aborted" {
				aborted = append(aborted, in)
				if in.MergeRunID == r.ID && in.RunID != r.ID {
					f.SourceRunID = in.RunID
				}
			}
		}
		if reason, ok := purged(d, r, f.SourceRunID); ok {
			f.Cause, f.Detail = CausePurged, reason
			res.Missed = append(res.Missed, f)
			continue
		}
		arts, err := d.Artifacts(r.ID)
		if err != nil {
			return res, fmt.Errorf("run %d: list its artifacts: %w", r.ID, err)
		}
		switch {
		case arts.Listed > 0 && arts.Expired == arts.Listed:
			f.Cause = CauseExpired
			f.Detail = fmt.Sprintf("all %d artifacts have expired: nothing left to ingest", arts.Listed)
		case arts.Listed == 0 && r.Conclusion == "success":
			f.Cause, f.Detail = CauseNoArtifacts, "the run uploaded no artifact"
		case len(aborted) > 0:
			f.Cause = CauseAborted
			f.Detail = fmt.Sprintf("%s, the last: %s", wording.Plural(len(aborted), "time", "times"), wording.OneLine(aborted[len(aborted)-1].Error, 200))
		case r.Conclusion == "cancelled":
			f.Cause, f.Detail = CauseRunCancelled, "its results may be partial"
		case r.Conclusion != "success":
			f.Cause, f.Detail = CauseRunFailed, "conclusion "+r.Conclusion+": its results may be partial"
		default:
			f.Cause, f.Detail = CauseNoIngest, "no ingest of the run is recorded"
		}
		if f.Cause != CauseExpired && f.Cause != CauseNoArtifacts {
			f.Command = command(d.Repo, r.ID, f.SourceRunID)
		}
		// A reused sweep is fetched from GitHub only: the archive cannot
		// recover it under its merge run.
		if f.Cause == CauseExpired && d.Archived != nil && f.SourceRunID == 0 {
			held, err := d.Archived(r.ID)
			if err != nil {
				return res, fmt.Errorf("run %d: look it up in the archive %s: %w", r.ID, d.Archive, err)
			}
			if held {
				f.Detail = fmt.Sprintf("all %d artifacts have expired on GitHub; the archive %s holds the run", arts.Listed, d.Archive)
				f.Command = fmt.Sprintf(archiveCommandFormat, d.Repo, r.ID, d.Archive)
			} else {
				f.Detail += "; the archive " + d.Archive + " does not hold the run"
			}
		}
		res.Missed = append(res.Missed, f)
	}
	return res, nil
}

func succeeded(ins []Ingest) bool {
	for _, in := range ins {
		if in.Status == "succeeded" || in.Status == "completed_with_failures" {
			return true
		}
	}
	return false
}

// purged asks about the run and, for a reused sweep, its source run.
func purged(d Deps, r Run, source int64) (string, bool) {
	if d.Purged == nil {
		return "", false
	}
	if reason, ok := d.Purged(r.ID, r.Attempt); ok {
		return reason, true
	}
	if source != 0 {
		return d.Purged(source, 0)
	}
	return "", false
}

// command is the recovery command: the sweep under its merge run when
// the ledger knows the source, else the merge run (ingest run finds a
// reused sweep's source itself).
func command(repo string, runID, source int64) string {
	if source != 0 {
		return fmt.Sprintf("ingest run --repo %s --run-id %d --merge-run-id %d", repo, source, runID)
	}
	return fmt.Sprintf("ingest run --repo %s --run-id %d", repo, runID)
}
