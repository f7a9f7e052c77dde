// Package schema holds the leaf domain types shared by every stage of the
// ingest: run identity, normalized rows and the ingest summary. It imports
// nothing of ours.
package schema

import (
	"errors"
	"fmt"
	"time"
)

// Status is the outcome of one ingest attempt.
type Status string

const (
	// StatusSucceeded: the run was written and nothing failed.
	StatusSucceeded Status = "succeeded"
	// StatusCompletedWithFailures: the run was written, but some rows or
	// files failed and were left out.
	StatusCompletedWithFailures Status = "completed_with_failures"
	// StatusAborted: the ingest was rolled back; nothing was written.
	StatusAborted Status = "aborted"
	// StatusPurged: the run overrides purge the run attempt: nothing of
	// it was written, and what earlier ingests stored of it was deleted
	// (Details.PurgeReason says why).
	StatusPurged Status = "purged"
)

// Category names one row of the report table.
type Category string

const (
	CategoryBenchmark Category = "benchmark"
	CategoryEval      Category = "eval"
	CategoryTrace     Category = "trace"
	CategoryPower     Category = "power"
	// CategoryEvalSamples is used for samples files with bad lines (one
	// failure per file, its reason counting the lines): samples belong to
	// no table row — the eval row's unit is the eval_results row, which
	// still lands — so like CategoryRun each such file counts once in
	// FailureCount.
	CategoryEvalSamples Category = "eval_samples"
	// CategoryRun is used for failures that belong to no table row
	// (run-stats, changelog, run metadata, artifacts of unknown kind).
	CategoryRun Category = "run"
)

// Counts is one row of the report table. Every item read lands in exactly
// one column: New + Duplicate + Skipped + Unmapped + Failed = items read.
type Counts struct {
	New       int64 `json:"new"`
	Duplicate int64 `json:"duplicate"`
	Skipped   int64 `json:"skipped"`
	Unmapped  int64 `json:"unmapped"`
	Failed    int64 `json:"failed"`
}

// Total is the number of items the row accounts for.
func (c Counts) Total() int64 { return c.New + c.Duplicate + c.Skipped + c.Unmapped + c.Failed }

// Rows is the report table: exactly these four rows, in this order.
type Rows struct {
	Benchmark Counts `json:"benchmark"`
	Eval      Counts `json:"eval"`
	Trace     Counts `json:"trace"`
	Power     Counts `json:"power"`
}

// Stats are the eleven counters of the report's stats line, in the order
// the report prints them.
type Stats struct {
	BenchmarkFiles          int64 `json:"benchmarkFiles" counter:"seen"`
	RawBenchmarkRows        int64 `json:"rawBenchmarkRows" counter:"seen"`
	CoveredByPerJobFiles    int64 `json:"coveredByPerJobFiles" counter:"seen"`
	PurgedPoints            int64 `json:"purgedPoints" counter:"seen"`
	FailedRunRows           int64 `json:"failedRunRows" counter:"seen"`
	RunStatsNew             int64 `json:"runStatsNew" counter:"written"`
	RunStatsDuplicate       int64 `json:"runStatsDuplicate" counter:"seen"`
	EvalSamplesNew          int64 `json:"evalSamplesNew" counter:"written"`
	GPUMetricSamplesNew     int64 `json:"gpuMetricSamplesNew" counter:"written"`
	PowerPublicationPoints  int64 `json:"powerPublicationPoints" counter:"seen"`
	ChangelogEntriesWritten int64 `json:"changelogEntriesWritten" counter:"written"`
}

// Details are counters beyond the stats line that operators still want to
// see: they explain the skipped column and what the run cost.
type Details struct {
	// StaleAttemptRows: per-job rows whose point a newer attempt owns.
	StaleAttemptRows int64 `json:"staleAttemptRows" counter:"seen"`
	// MissingIdentityRows: rows without isl/osl (single-turn) that cannot
	// name their point.
	MissingIdentityRows int64 `json:"missingIdentityRows" counter:"seen"`
	// BenchmarkRowsUpdated: duplicates whose stored values differed and were
	// refreshed from the artifact (for example after an alias-table change).
	BenchmarkRowsUpdated int64 `json:"benchmarkRowsUpdated" counter:"written"`
	ConfigsNew           int64 `json:"configsNew" counter:"written"`
	AvailabilityNew      int64 `json:"availabilityNew" counter:"written"`
	RunStatsRows         int64 `json:"runStatsRows" counter:"seen"`
	ArtifactsRead        int64 `json:"artifactsRead" counter:"seen"`
	FilesRead            int64 `json:"filesRead" counter:"seen"`
	BytesRead            int64 `json:"bytesRead" counter:"seen"`
	// UnknownMetrics lists numeric metric keys that are not in the catalog's
	// known metric list; they are stored all the same.
	UnknownMetrics []string `json:"unknownMetrics"`
	// EvalRows are the eval items read (the items of the eval row):
	// per-config task rows, aggregate rows, and unreadable eval files.
	EvalRows int64 `json:"evalRows,omitempty" counter:"seen"`
	// EvalRowsUpdated: duplicates whose stored values differed and were
	// refreshed.
	EvalRowsUpdated int64 `json:"evalRowsUpdated,omitempty" counter:"written"`
	// EvalSampleFiles / EvalSampleLines: samples files and non-blank lines
	// read; EvalSampleLinesFailed lines skipped as malformed (listed per
	// file under failures, category eval_samples); EvalSampleFilesFailed
	// files that could not be read at all.
	EvalSampleFiles       int64 `json:"evalSampleFiles,omitempty" counter:"seen"`
	EvalSampleLines       int64 `json:"evalSampleLines,omitempty" counter:"seen"`
	EvalSampleLinesFailed int64 `json:"evalSampleLinesFailed,omitempty" counter:"seen"`
	EvalSampleFilesFailed int64 `json:"evalSampleFilesFailed,omitempty" counter:"seen"`
	// EvalSamplesDuplicate: good sample lines read that were already stored
	// (or repeated within the run); with evalSamplesNew and
	// evalSampleLinesFailed they add up to evalSampleLines.
	EvalSamplesDuplicate int64 `json:"evalSamplesDuplicate,omitempty" counter:"seen"`
	// EvalSampleFilesUnchanged: samples files an earlier ingest stored
	// every line of (same sha256): hashed, not parsed again.
	EvalSampleFilesUnchanged int64 `json:"evalSampleFilesUnchanged,omitempty" counter:"seen"`
	// EvalSampleFilesRecorded: samples files whose digest their eval row
	// holds after this ingest (the unchanged ones and those stored in
	// full now): a rerun of the same files hashes them, not parses them.
	EvalSampleFilesRecorded int64 `json:"evalSampleFilesRecorded,omitempty" counter:"seen"`
	// EvalSampleTextsNew: distinct documents, prompts and model outputs
	// stored for the first time.
	EvalSampleTextsNew int64 `json:"evalSampleTextsNew,omitempty" counter:"written"`
	// EvalsOnlySkippedRows: benchmark rows not written because the
	// changelog marks the run evals-only.
	EvalsOnlySkippedRows int64 `json:"evalsOnlySkippedRows,omitempty" counter:"seen"`
	// PowerSeriesRead counts the telemetry series the run holds (the power
	// row's items read; a file not opened counts as one).
	PowerSeriesRead int64 `json:"powerSeriesRead,omitempty" counter:"seen"`
	// RetiredGPUPowerPoints: points staged without their GPU power keys
	// (metrics and workers) because the legacy amd-smi source policy
	// retires them (ingest/overrides/retired_gpu_power.json).
	RetiredGPUPowerPoints int64 `json:"retiredGpuPowerPoints,omitempty" counter:"seen"`
	// CPU-side (Grace) power of multinode power bundles
	// (power/cpu/samples.csv), read best effort and never a failure: files
	// read and their valid rows, and files refused (each named in a note).
	CPUPowerFilesRead    int64 `json:"cpuPowerFilesRead,omitempty" counter:"seen"`
	CPUPowerSampleRows   int64 `json:"cpuPowerSampleRows,omitempty" counter:"seen"`
	CPUPowerFilesRefused int64 `json:"cpuPowerFilesRefused,omitempty" counter:"seen"`
	// OverrideRowsDeleted / OverrideRowsRewritten: rows of data earlier
	// ingests stored that the run's override-ledger entries deleted
	// (benchmark rows and what only they used, run rows) or rewrote
	// (conclusions, retired GPU power); a note names each entry.
	OverrideRowsDeleted   int64 `json:"overrideRowsDeleted,omitempty" counter:"written"`
	OverrideRowsRewritten int64 `json:"overrideRowsRewritten,omitempty" counter:"written"`
	// BackfilledPoints: rows staged with the correction of a point
	// backfill of the ledger (metrics, offload mode); PointBackfillsWithheld:
	// rows a backfill names whose metrics no longer carry the audited
	// values it rests on, staged as read; BackfilledChangelogEntries:
	// changelog entries written with a changelog backfill's correction.
	BackfilledPoints           int64 `json:"backfilledPoints,omitempty" counter:"seen"`
	PointBackfillsWithheld     int64 `json:"pointBackfillsWithheld,omitempty" counter:"seen"`
	BackfilledChangelogEntries int64 `json:"backfilledChangelogEntries,omitempty" counter:"seen"`
	// PurgedRun is set when the run overrides purge the run: nothing of
	// it was written but its ledger row (status purged); PurgeReason is
	// the ledger entry's reason.
	PurgedRun   bool   `json:"purgedRun,omitempty"`
	PurgeReason string `json:"purgeReason,omitempty"`
	// ExpiredArtifacts: names in the listing (artifacts.json) whose every
	// upload has expired and that the tree does not hold, so nothing of
	// them was read (named in a note).
	ExpiredArtifacts int64 `json:"expiredArtifacts" counter:"seen"`
	// MissingArtifacts: names in the listing with an upload still
	// downloadable that the tree does not hold; each is also a run failure.
	MissingArtifacts int64 `json:"missingArtifacts" counter:"seen"`
	// FailuresNotListed: failures counted past the bound of the failures
	// list (10,000), and RunFailuresNotListed those of them that belong to
	// no row (categories run and eval_samples, which no row's failed cell
	// counts): the headline's count of failures stays exact.
	FailuresNotListed    int64 `json:"failuresNotListed,omitempty" counter:"-"`
	RunFailuresNotListed int64 `json:"runFailuresNotListed,omitempty" counter:"-"`
	// NoBenchmarkData, when set, says why the run yielded no benchmark
	// data at all (none present, all expired, all failed): the rest was
	// written, the status is completed_with_failures, and the headline says
	// so. An evals-only run (its changelog says so) and a purged run never
	// set it.
	NoBenchmarkData string `json:"noBenchmarkData,omitempty"`
	// NoConclusion: the run is stored without a conclusion, so the
	// dashboard (which reads only runs with one) does not show it.
	NoConclusion bool `json:"noConclusion,omitempty"`
	// AppendOnly: every changelog entry of the run is append-only; the
	// impact checks that it only adds points (Impact.AppendOnly).
	AppendOnly bool `json:"appendOnly,omitempty"`
	// AttemptOrder says how retries were ordered: "listing" when the GitHub
	// artifact listing (artifacts.json) was available, "inferred" otherwise.
	AttemptOrder string `json:"attemptOrder"`
	DurationMS   int64  `json:"durationMs" counter:"-"`
	// Traces stage: AgentX rows it accounted for (the trace row's items
	// read), sidecars, blobs and stored bytes it added, server log bundles
	// stored and rows newly linked to one.
	TraceRowsRead       int64 `json:"traceRowsRead,omitempty" counter:"seen"`
	TraceSidecarsNew    int64 `json:"traceSidecarsNew,omitempty" counter:"written"`
	TraceBlobsNew       int64 `json:"traceBlobsNew,omitempty" counter:"written"`
	TraceBlobBytesNew   int64 `json:"traceBlobBytesNew,omitempty" counter:"written"`
	ServerLogsNew       int64 `json:"serverLogsNew,omitempty" counter:"written"`
	ServerLogRowsLinked int64 `json:"serverLogRowsLinked,omitempty" counter:"written"`
	// UnsupportedSchemaRows: benchmark rows and run-stats entries refused
	// for a result_schema_version other than 1 (each also a failure).
	UnsupportedSchemaRows int64 `json:"unsupportedSchemaRows,omitempty" counter:"seen"`
	// RejectedRowsListed: entries of the producer's rejected_rows_* lists;
	// QuarantinedRows and QuarantinedEvalRows: the benchmark and eval rows
	// of per-config artifacts skipped because a list names them.
	RejectedRowsListed  int64 `json:"rejectedRowsListed,omitempty" counter:"seen"`
	QuarantinedRows     int64 `json:"quarantinedRows,omitempty" counter:"seen"`
	QuarantinedEvalRows int64 `json:"quarantinedEvalRows,omitempty" counter:"seen"`
	// Receipts: measurement receipts read (receipt.json, 0 or 1);
	// ReceiptMembers: files of its artifacts checked against it (a
	// mismatch is also a run failure); ExecutionRecords: execution.json
	// files of benchmark artifacts, evidence and never rows;
	// BenchmarkFilesNotRead: other files of benchmark artifacts that are
	// not JSON and hold no rows (named in a note).
	// EvalIntegrationErrors: eval tasks whose harness reported an
	// infrastructure failure (inferencex-eval-v1 integration_error or zero
	// effective samples): failed items, never scores.
	EvalIntegrationErrors int64 `json:"evalIntegrationErrors,omitempty" counter:"seen"`
	Receipts              int64 `json:"receipts,omitempty" counter:"seen"`
	ReceiptMembers        int64 `json:"receiptMembers,omitempty" counter:"seen"`
	ExecutionRecords      int64 `json:"executionRecords,omitempty" counter:"seen"`
	BenchmarkFilesNotRead int64 `json:"benchmarkFilesNotRead,omitempty" counter:"seen"`
	// ServerMetricRows: AgentX rows whose owned server-metric keys were
	// derived; ServerMetricRowsUpdated those whose stored keys changed;
	// ServerMetricDisagreements the published values that the derived ones
	// differ from by more than 5 % (listed as server metric warnings).
	ServerMetricRows          int64 `json:"serverMetricRows,omitempty" counter:"seen"`
	ServerMetricRowsUpdated   int64 `json:"serverMetricRowsUpdated,omitempty" counter:"written"`
	ServerMetricDisagreements int64 `json:"serverMetricDisagreements,omitempty" counter:"seen"`
	// LatestBenchmarks is the refresh of the latest_benchmarks view after
	// the commit (absent for dry runs and aborted ingests).
	LatestBenchmarks *ViewRefresh `json:"latestBenchmarks,omitempty"`
	// UnchangedSince is set on a rerun answered from the ledger: the id of
	// the ingest whose inputs (same digest) and data (nothing written
	// since) it found unchanged, so nothing was read or written again.
	UnchangedSince int64 `json:"unchangedSince,omitempty" counter:"-"`
}

// Unmapped lists the values that could not be resolved, by kind. Every list
// is sorted and unique.
type Unmapped struct {
	Models      []string `json:"models"`
	Hardware    []string `json:"hardware"`
	Precisions  []string `json:"precisions"`
	Frameworks  []string `json:"frameworks"`
	SpecMethods []string `json:"specMethods"`
	Datasets    []string `json:"datasets"`
}

// Empty reports whether nothing at all was unmapped.
func (u Unmapped) Empty() bool {
	return len(u.Models)+len(u.Hardware)+len(u.Precisions)+len(u.Frameworks)+len(u.SpecMethods)+len(u.Datasets) == 0
}

// Failure is one item that could not be read or written.
type Failure struct {
	Category Category `json:"category"`
	Artifact string   `json:"artifact"`
	File     string   `json:"file,omitempty"`
	Reason   string   `json:"reason"`
}

// Links are the workflow runs the report points at, where known.
type Links struct {
	IngestRun string `json:"ingestRun,omitempty"`
	MergeRun  string `json:"mergeRun,omitempty"`
	SourceRun string `json:"sourceRun,omitempty"`
}

// RunIdentity names the run an ingest is about.
type RunIdentity struct {
	Repo             string `json:"repo"`
	SourceRunID      int64  `json:"sourceRunId"`
	SourceRunAttempt int    `json:"sourceRunAttempt"`
	MergeRunID       int64  `json:"mergeRunId"`
	MergeRunAttempt  int    `json:"mergeRunAttempt"`
}

// Summary is everything one ingest attempt has to say. The Markdown, JSON
// and console reports are rendered from it alone. Field names are stable.
type Summary struct {
	SchemaVersion int         `json:"schemaVersion"`
	IngestID      int64       `json:"ingestId,omitempty"`
	Run           RunIdentity `json:"run"`
	Target        string      `json:"target"`
	// Publication says whether this was a staged ingest or a promotion.
	Publication *Publication `json:"publication,omitempty"`
	Status      Status       `json:"status"`
	// AbortReason is the one-line reason of an aborted ingest.
	AbortReason string    `json:"abortReason,omitempty"`
	DryRun      bool      `json:"dryRun"`
	StartedAt   time.Time `json:"startedAt"`
	FinishedAt  time.Time `json:"finishedAt"`
	Links       Links     `json:"links"`
	Rows        Rows      `json:"rows"`
	Stats       Stats     `json:"stats"`
	Details     Details   `json:"details"`
	Unmapped    Unmapped  `json:"unmapped"`
	Failures    []Failure `json:"failures"`
	Notes       []string  `json:"notes"`
	// PowerWarnings lists published power that its telemetry contradicts.
	PowerWarnings []PowerWarning `json:"powerWarnings,omitempty"`
	// ServerMetricWarnings lists published AgentX server metrics that the
	// values derived from the raw server metrics differ from by more than
	// 5 %.
	ServerMetricWarnings []ServerMetricWarning `json:"serverMetricWarnings,omitempty"`
	// Impact is what the run does to the published dashboard
	// (latest_benchmarks); absent when nothing was computed (a purged run,
	// an ingest aborted before the update, a summary stored before it).
	Impact *Impact `json:"impact,omitempty"`
}

// SummarySchemaVersion is the version of the Summary JSON layout.
const SummarySchemaVersion = 1

// ErrUnreadableSummary is wrapped by CheckReadable's error: a stored
// summary of a schemaVersion this build does not read.
var ErrUnreadableSummary = errors.New("unreadable summary")

// UnreadableReason says why this build does not read a summary of
// schemaVersion v — "" when it does. It reads SummarySchemaVersion only:
// the fields of another layout may mean something else, so a report, a
// rerun answered from the ledger or a verification built on them would
// state what the ingest never did.
func UnreadableReason(v int) string {
	switch {
	case v == SummarySchemaVersion:
		return ""
	case v > SummarySchemaVersion:
		return fmt.Sprintf("summary written by a newer build (schemaVersion %d): upgrade ingest to read it", v)
	}
	return fmt.Sprintf("summary of an unknown layout (schemaVersion %d, this build reads %d): it cannot be read", v, SummarySchemaVersion)
}

// CheckReadable is nil when this build reads s (UnreadableReason), else
// an error saying why, wrapping ErrUnreadableSummary.
func (s *Summary) CheckReadable() error {
	if why := UnreadableReason(s.SchemaVersion); why != "" {
		return fmt.Errorf("%s: %w", why, ErrUnreadableSummary)
	}
	return nil
}

// FailureCount is the number of failed items across every row plus
// failures that belong to no row, listed or not.
func (s *Summary) FailureCount() int64 {
	n := s.Rows.Benchmark.Failed + s.Rows.Eval.Failed + s.Rows.Trace.Failed + s.Rows.Power.Failed + s.Details.RunFailuresNotListed
	for _, f := range s.Failures {
		if f.Category == CategoryRun || f.Category == CategoryEvalSamples {
			n++
		}
	}
	return n
}
