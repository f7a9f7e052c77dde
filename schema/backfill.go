package schema

import (
	"encoding/json"
	"time"
)

// BackfillState is where a run stands in a backfill pass.
type BackfillState string

// Backfill states.
const (
	// BackfillPending: not yet worked on, or claimed by a worker now.
	BackfillPending BackfillState = "pending"
	// BackfillIngested: this pass ingested the run (its ledger row says how).
	BackfillIngested BackfillState = "ingested"
	// BackfillSkipped: the ledger already held a successful ingest of the
	// run's latest attempt, or the run cannot be ingested (not completed).
	BackfillSkipped BackfillState = "skipped"
	// BackfillFailed: fetching or ingesting the run failed; nothing of it
	// was written. A later pass retries it.
	BackfillFailed BackfillState = "failed"
)

// BackfillSpec is what a worker asks for: the active pass of Key, or a new
// one when none is active.
type BackfillSpec struct {
	// Key identifies the work: equal parameters, equal key.
	Key  string
	Repo string
	// Params is the parameters in readable form (JSON object).
	Params   json.RawMessage
	Reingest bool
}

// BackfillPass is one pass of a backfill: the queue that the workers
// started with one key share until every run of it is done.
type BackfillPass struct {
	ID       int64
	Key      string
	Repo     string
	Reingest bool
	// LedgerMark is the newest ledger id when the pass began.
	LedgerMark int64
	StartedAt  time.Time
	FinishedAt time.Time
	// Created is set when this worker began the pass (rather than joined it).
	Created bool
}

// BackfillRun is one run of a pass's queue.
type BackfillRun struct {
	RunID int64
	// Attempt is the latest attempt as listed (0: not known yet).
	Attempt   int
	CreatedAt time.Time
	// Tree is the run tree of a --from-dir backfill.
	Tree string
	// State and Detail are set when a run is queued already settled (a
	// run the ledger shows ingested, a run that is not completed).
	State  BackfillState
	Detail string
}

// BackfillOutcome is how a worker settled a claimed run.
type BackfillOutcome struct {
	State BackfillState
	// Attempt is the attempt worked on (0 keeps the listed one).
	Attempt      int
	IngestID     int64
	IngestStatus Status
	Worker       string
	Detail       string
	Duration     time.Duration
}

// BackfillCounts counts a pass's runs by state.
type BackfillCounts struct {
	Total    int64 `json:"total"`
	Pending  int64 `json:"pending"`
	Ingested int64 `json:"ingested"`
	Skipped  int64 `json:"skipped"`
	Failed   int64 `json:"failed"`
	// Worked counts the runs a worker fetched and ingested or failed (not
	// those queued settled, nor those skipped at the claim): the pace of
	// the pass.
	Worked int64 `json:"worked"`
}

// Done is the number of settled runs.
func (c BackfillCounts) Done() int64 { return c.Ingested + c.Skipped + c.Failed }

// BackfillSettled is a settled run of a pass, for listings.
type BackfillSettled struct {
	RunID        int64
	Attempt      int
	State        BackfillState
	IngestID     int64
	IngestStatus Status
	Worker       string
	Detail       string
	Duration     time.Duration
	FinishedAt   time.Time
	// CreatedAt is the run's creation time as queued (zero: unknown); only
	// BackfillRuns reads it.
	CreatedAt time.Time
}

// BackfillInfo is a pass with its counts, for `ingest status`.
type BackfillInfo struct {
	Pass   BackfillPass
	Counts BackfillCounts
}

// LedgerHit is a finished ingest the ledger holds for a run and attempt.
type LedgerHit struct {
	RunID    int64
	Attempt  int
	IngestID int64
	Status   Status
}

// IngestRecord is one ledger row, for `ingest status`.
type IngestRecord struct {
	ID              int64
	Repo            string
	RunID           int64
	Attempt         int
	MergeRunID      int64
	MergeRunAttempt int
	Status          Status
	Target          string
	StartedAt       time.Time
	FinishedAt      time.Time
	Duration        time.Duration
	Error           string
	ToolVersion     string
	// Summary is the stored report (nil for a ledger row without one).
	Summary *Summary
	// BackfillID is the pass that ingested the run (0: not a backfill).
	BackfillID int64
}
