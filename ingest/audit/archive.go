package audit

import (
	"fmt"
	"time"
)

// Archived is a run the artifact archive holds.
type Archived struct {
	ID   int64
	Date time.Time
}

// LedgerRun is a run the ledger holds a successful ingest of.
type LedgerRun struct {
	ID        int64
	CreatedAt time.Time
}

// ArchiveFinding is a difference between the archive and the ledger.
type ArchiveFinding struct {
	RunID int64 `json:"runId"`
	// Date is the archive's date folder, or the run's creation time for a
	// run missing from the archive.
	Date    time.Time `json:"date"`
	Cause   string    `json:"cause"`
	Detail  string    `json:"detail,omitempty"`
	Command string    `json:"command,omitempty"`
}

// Causes of an archive finding.
const (
	CauseNeverIngested   = "in the archive, never ingested"
	CauseNotArchived     = "ingested, missing from the archive"
	CauseArchivedPurged  = "in the archive, purged on purpose"
	archiveCommandFormat = "ingest run --repo %s --run-id %d --source archive --archive %s"
)

// ArchiveResult compares the archive's runs with the ledger.
type ArchiveResult struct {
	URL       string `json:"url"`
	InArchive int    `json:"inArchive"`
	Ingested  int    `json:"ingested"`
	// Findings are the archived runs never ingested (with the command
	// that recovers each), purged ones (never proposed), and the ingested
	// runs the archive lacks.
	Findings []ArchiveFinding `json:"findings"`
}

// Unresolved counts the findings that are not purged on purpose.
func (r ArchiveResult) Unresolved() int {
	n := 0
	for _, f := range r.Findings {
		if f.Cause != CauseArchivedPurged {
			n++
		}
	}
	return n
}

// AuditArchive compares archived (the archive's runs in the window,
// oldest first) with the ledger: ledger are the rows naming them; ingested
// are the runs of the window the ledger holds successful ingests of;
// inArchive says whether the archive holds a run at all (any date).
func AuditArchive(url, repo string, archived []Archived, ledger []Ingest, ingested []LedgerRun, inArchive func(int64) bool,
	purged func(runID int64, attempt int) (string, bool)) ArchiveResult {
	res := ArchiveResult{URL: url, InArchive: len(archived), Findings: []ArchiveFinding{}}
	byRun := map[int64][]Ingest{}
	for _, in := range ledger {
		byRun[in.RunID] = append(byRun[in.RunID], in)
	}
	for _, r := range archived {
		if succeeded(byRun[r.ID]) {
			res.Ingested++
			continue
		}
		f := ArchiveFinding{RunID: r.ID, Date: r.Date, Cause: CauseNeverIngested}
		if purged != nil {
			if reason, ok := purged(r.ID, 0); ok {
				f.Cause, f.Detail = CauseArchivedPurged, reason
				res.Findings = append(res.Findings, f)
				continue
			}
		}
		f.Command = fmt.Sprintf(archiveCommandFormat, repo, r.ID, url)
		res.Findings = append(res.Findings, f)
	}
	for _, r := range ingested {
		if !inArchive(r.ID) {
			res.Findings = append(res.Findings, ArchiveFinding{RunID: r.ID, Date: r.CreatedAt, Cause: CauseNotArchived,
				Detail: "its artifacts survive only on GitHub, until they expire"})
		}
	}
	return res
}
