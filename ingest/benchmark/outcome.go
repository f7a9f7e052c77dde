package benchmark

import "fmt"

// OutcomeKind says what became of one benchmark row.
type OutcomeKind int

const (
	// OK: the row normalized to a point that can be stored.
	OK OutcomeKind = iota
	// Skipped: the row is deliberately not stored (see Outcome.SkipReason).
	Skipped
	// Unmapped: a dimension did not resolve through the catalog.
	Unmapped
	// Failed: the row is malformed (see Outcome.Reason).
	Failed
)

// Skip reasons.
const (
	// SkipFailedRun: the producer marked the run failed, or no request
	// succeeded.
	SkipFailedRun = "failed_run"
	// SkipMissingIdentity: a single-turn row without isl or osl.
	SkipMissingIdentity = "missing_identity"
)

// Kinds of UnmappedValue.
const (
	DimModel      = "model"
	DimHardware   = "hardware"
	DimPrecision  = "precision"
	DimFramework  = "framework"
	DimSpecMethod = "spec_method"
)

// String returns the lower-case name of the kind.
func (k OutcomeKind) String() string {
	switch k {
	case OK:
		return "ok"
	case Skipped:
		return "skipped"
	case Unmapped:
		return "unmapped"
	case Failed:
		return "failed"
	default:
		return fmt.Sprintf("OutcomeKind(%d)", int(k))
	}
}

// MarshalText makes the kind readable in JSON (golden files, summaries).
func (k OutcomeKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmappedValue is one raw value that did not resolve.
type UnmappedValue struct {
	Kind  string `json:"kind"` // model, hardware, precision, framework or spec_method
	Value string `json:"value"`
}

// Outcome explains the result of normalizing one row.
type Outcome struct {
	Kind OutcomeKind `json:"kind"`
	// SkipReason is SkipFailedRun or SkipMissingIdentity for Skipped rows.
	SkipReason string `json:"skip_reason,omitempty"`
	// Unmapped lists every unresolved dimension of an Unmapped row.
	Unmapped []UnmappedValue `json:"unmapped,omitempty"`
	// Reason says precisely why a row Failed, e.g.
	// "conc: -4 is not a positive integer".
	Reason string `json:"reason,omitempty"`
	// UnsupportedSchema marks a Failed row refused for its
	// result_schema_version (CheckResultSchemaVersion).
	UnsupportedSchema bool `json:"unsupported_schema,omitempty"`
	// UnknownMetrics lists (sorted) the numeric keys of an OK row that were
	// kept but are not in the catalog's metric list.
	UnknownMetrics []string `json:"unknown_metrics,omitempty"`
}

func skipped(reason string) Outcome { return Outcome{Kind: Skipped, SkipReason: reason} }

func failed(format string, args ...any) Outcome {
	return Outcome{Kind: Failed, Reason: fmt.Sprintf(format, args...)}
}
