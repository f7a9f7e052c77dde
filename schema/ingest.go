package schema

import (
	"cmp"
	"encoding/json"
	"strconv"
	"time"
)

// RunStart is what the store needs to open the transaction of one ingest.
type RunStart struct {
	Run  RunIdentity
	Meta RunMeta
	// MergeMeta describes the merge (trigger) run: the run itself unless a
	// pull request's sweep was reused at merge time. Its changelog is the
	// run's changelog.
	MergeMeta RunMeta
	// NameIsFallback and CreatedAtIsFallback mark values that were made up
	// because nothing better was known; a later ingest that knows the real
	// value replaces them, but a fallback never replaces a known value.
	NameIsFallback      bool
	CreatedAtIsFallback bool
	Target              string
	StartedAt           time.Time
	ToolVersion         string
}

// WrittenRun is the workflow run row an ingest writes under.
type WrittenRun struct {
	WorkflowRunID int64
	IngestID      int64
	// Date is the run's date (YYYY-MM-DD), stamped on every row it owns.
	Date string
	// NoConclusion is set when the stored run has no conclusion (none
	// given now, none stored before): the dashboard leaves it out.
	NoConclusion bool
}

// StagedBenchmark is one normalized benchmark row on its way to the store,
// with what decides which copy of a point wins.
type StagedBenchmark struct {
	Point BenchmarkPoint
	// Key is Point.Key(), when the caller already computed it.
	Key    string
	Source Provenance
	// IsAggregate is true for rows of results_* aggregates; per-job bmk_*
	// files own their points first.
	IsAggregate bool
	// AttemptRank orders copies of one point: 0 is the newest upload.
	AttemptRank int
	// StoredMetrics, when set, are the metrics written for the point in
	// place of Point.Metrics: the producer's values with what the ingest
	// owns of them already derived (an AgentX row's server-metric keys).
	// The content digest covers Point.Metrics, the input, so that a rerun
	// recognises the row whatever a later stage made of the stored values.
	StoredMetrics map[string]any
	// ServerMetricsFrom, set with StoredMetrics on an AgentX row, is what
	// the traces stage derives the row's owned keys from when the row is
	// written with StoredMetrics: its config and the numbers among the
	// server-metric inputs of StoredMetrics, as a read-back of the written
	// row would give them (RowID and links unset).
	ServerMetricsFrom *TraceRowLink
}

// CopyRank is what decides which staged copy of a point wins.
type CopyRank struct {
	Aggregate      bool
	AttemptRank    int
	Artifact, File string
	Row            int
}

// Rank is the copy's CopyRank.
func (b *StagedBenchmark) Rank() CopyRank {
	return CopyRank{Aggregate: b.IsAggregate, AttemptRank: b.AttemptRank, Artifact: b.Source.Artifact,
		File: b.Source.File, Row: b.Source.Row}
}

// CompareCopies orders two copies of one point, the winner first: per-job
// files before aggregates, then the newest upload (AttemptRank 0), then
// artifact, file and row compared as bytes — never the order rows arrived
// in, so the winner does not depend on how the parser's workers interleave.
// The benchmark stage ranks copies by it, and `ingest compare` picks its
// winners by it.
func CompareCopies(a, b CopyRank) int {
	if a.Aggregate != b.Aggregate {
		if a.Aggregate {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.AttemptRank, b.AttemptRank), cmp.Compare(a.Artifact, b.Artifact),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row))
}

// StagedCopy is what the store reports of one copy of a point as it
// stages it: the point (the hash of its key), the copy's content digest,
// its rank, its staging order and whether the run stores that digest
// already. The benchmark stage decides from these which copies win
// (CompareCopies) and gives the store the winners to write.
type StagedCopy struct {
	Point, Digest [16]byte
	BenchmarkType string
	Rank          CopyRank
	// Seq is the copy's staging order (stage_benchmark.seq).
	Seq       int32
	Unchanged bool
	// Adopted: an adopted row stands for the copy (a rerun of a run an
	// adopt took over); the row learns the copy's provenance.
	Adopted bool
	// Written is what the copy is written with for the traces stage
	// (TracePoint.Written); nil when unchanged.
	Written *TraceRowLink
}

// RunStat is one cluster's job success count from run-stats.
type RunStat struct {
	Cluster  string
	Hardware string
	NSuccess int
	Total    int
	Source   Provenance
}

// ApplyResult is what the store learned while writing a run.
type ApplyResult struct {
	BenchmarkStaged   int64
	BenchmarkNew      int64
	BenchmarkUpdated  int64
	ConfigsNew        int64
	AvailabilityNew   int64
	RunStatsNew       int64
	RunStatsDuplicate int64
}

// Key is the point identity of a row within its run, as one string:
// the configs natural key, benchmark type, isl, osl, conc, offload mode and
// recipe fingerprint (absent values written as null).
func (p *BenchmarkPoint) Key() string {
	return jsonStrings(p.Config.keyParts(p.BenchmarkType, optInt(p.ISL), optInt(p.OSL), strconv.Itoa(p.Conc), p.OffloadMode,
		optString(p.RecipeFingerprint)))
}

// jsonStrings is the JSON array of parts exactly as json.Marshal writes
// it, without its reflection for the usual parts: printable ASCII with
// nothing to escape, and optString's null sentinel. Any other part takes
// json.Marshal.
func jsonStrings(parts []string) string {
	if parts == nil {
		return "null"
	}
	n := 2
	for _, p := range parts {
		if p != nullSentinel && !plainJSON(p) {
			enc, _ := json.Marshal(parts) // a []string always marshals
			return string(enc)
		}
		n += len(p) + 3
	}
	b := make([]byte, 0, n+len(parts)*5)
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		if p == nullSentinel {
			b = append(b, `"\u0000null"`...)
			continue
		}
		b = append(b, '"')
		b = append(b, p...)
		b = append(b, '"')
	}
	return string(append(b, ']'))
}

// plainJSON reports whether json.Marshal writes s between quotes as it is:
// printable ASCII but the quote, the backslash and the characters it
// escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func optInt(v *int) string {
	if v == nil {
		return "null"
	}
	return strconv.Itoa(*v)
}

// nullSentinel stands for an absent string in a key (json.Marshal writes
// it "\u0000null").
const nullSentinel = "\x00null"

func optString(v *string) string {
	if v == nil {
		return nullSentinel
	}
	return *v
}
