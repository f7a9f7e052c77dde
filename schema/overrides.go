package schema

import (
	"reflect"
	"slices"
)

// OverridePlan is the run-override ledger as the store applies it to data
// already stored (ingest overrides apply, and every ingest for the run it
// writes).
type OverridePlan struct {
	Conclusions []OverrideConclusion
	// PurgedRuns: every attempt of the run when Attempts is empty.
	PurgedRuns   []OverrideRun
	PurgedPoints []OverridePoint
	// RetiredGPUPower: points whose GPUPowerKeys are removed from metrics
	// and workers.
	RetiredGPUPower []OverrideRetired
	GPUPowerKeys    []string
	// ChangelogBackfills and PointBackfills: audited corrections of
	// stored changelogs and benchmark points, in ledger order.
	ChangelogBackfills []OverrideChangelogBackfill
	PointBackfills     []OverridePointBackfill
}

// OverrideConclusion corrects a run's conclusion.
type OverrideConclusion struct {
	RunID      int64
	Conclusion string
}

// OverrideRun purges a run, or some of its attempts.
type OverrideRun struct {
	RunID    int64
	Attempts []int
	Reason   string
	// Shipped: the entry comes from the ledger shipped in the binary alone.
	// Its purges name runs a database may never have held (the reference
	// never stored them either), so only an operator's entries are checked
	// for a run the database does not know.
	Shipped bool
}

// OverridePoint purges one benchmark point of a run; Attempt 0 is every
// attempt.
type OverridePoint struct {
	RunID   int64
	Attempt int
	Point   BenchmarkPoint
	Reason  string
	// Shipped: as OverrideRun.Shipped.
	Shipped bool
}

// OverrideRetired names a point whose GPU power a source policy retires;
// an empty HeadSHA or a stored run without one matches any.
type OverrideRetired struct {
	RunID   int64
	Attempt int
	HeadSHA string
	Point   BenchmarkPoint
	Reason  string
	// CSVSHA256 is the hex sha256 of the raw telemetry CSV the verdict
	// rests on: the stored AMD series with these bytes lose their power.
	CSVSHA256 string
}

// Runs is every source run the plan names, in ascending order, once.
func (p OverridePlan) Runs() []int64 {
	var runs []int64
	for _, c := range p.Conclusions {
		runs = append(runs, c.RunID)
	}
	for _, r := range p.PurgedRuns {
		runs = append(runs, r.RunID)
	}
	for _, x := range p.PurgedPoints {
		runs = append(runs, x.RunID)
	}
	for _, r := range p.RetiredGPUPower {
		runs = append(runs, r.RunID)
	}
	for _, b := range p.ChangelogBackfills {
		runs = append(runs, b.RunID)
	}
	for _, b := range p.PointBackfills {
		runs = append(runs, b.RunID)
	}
	slices.Sort(runs)
	return slices.Compact(runs)
}

// ForRun is the part of the plan about one source run.
func (p OverridePlan) ForRun(runID int64) OverridePlan {
	return OverridePlan{
		GPUPowerKeys:       p.GPUPowerKeys,
		Conclusions:        ofRun(p.Conclusions, runID, func(x OverrideConclusion) int64 { return x.RunID }),
		PurgedRuns:         ofRun(p.PurgedRuns, runID, func(x OverrideRun) int64 { return x.RunID }),
		PurgedPoints:       ofRun(p.PurgedPoints, runID, func(x OverridePoint) int64 { return x.RunID }),
		RetiredGPUPower:    ofRun(p.RetiredGPUPower, runID, func(x OverrideRetired) int64 { return x.RunID }),
		ChangelogBackfills: ofRun(p.ChangelogBackfills, runID, func(x OverrideChangelogBackfill) int64 { return x.RunID }),
		PointBackfills:     ofRun(p.PointBackfills, runID, func(x OverridePointBackfill) int64 { return x.RunID }),
	}
}

// ofRun is the entries of xs whose run is runID, in order (nil when none).
func ofRun[T any](xs []T, runID int64, run func(T) int64) []T {
	var out []T
	for _, x := range xs {
		if run(x) == runID {
			out = append(out, x)
		}
	}
	return out
}

// SplitPointBackfills splits the plan into its point backfills and the
// rest: an ingest corrects the stored points of its run before it writes
// its own rows (so a corrected identity never meets its stale source
// row), and applies the rest after its stages.
func (p OverridePlan) SplitPointBackfills() (points, rest OverridePlan) {
	points = OverridePlan{PointBackfills: p.PointBackfills}
	rest = p
	rest.PointBackfills = nil
	return points, rest
}

// OverrideResult is what applying a plan changed (or, in a dry run, would
// change), by table, and what each ledger entry did.
type OverrideResult struct {
	ConclusionsUpdated     int64 `json:"conclusionsUpdated"`
	WorkflowRunsDeleted    int64 `json:"workflowRunsDeleted"`
	BenchmarkRowsDeleted   int64 `json:"benchmarkRowsDeleted"`
	ServerLogsDeleted      int64 `json:"serverLogsDeleted"`
	TraceSidecarsDeleted   int64 `json:"traceSidecarsDeleted"`
	GPUMetricSeriesDeleted int64 `json:"gpuMetricSeriesDeleted"`
	AvailabilityDeleted    int64 `json:"availabilityDeleted"`
	RunStatsDeleted        int64 `json:"runStatsDeleted"`
	EvalRowsDeleted        int64 `json:"evalRowsDeleted"`
	ChangelogDeleted       int64 `json:"changelogEntriesDeleted"`
	RunDatasetsDeleted     int64 `json:"runDatasetsDeleted"`
	GPUPowerRowsRewritten  int64 `json:"gpuPowerRowsRewritten"`
	// TelemetryPowerSeriesRewritten: stored telemetry series whose power
	// samples, per-GPU power statistics and power facts a retired source
	// removed.
	TelemetryPowerSeriesRewritten int64 `json:"telemetryPowerSeriesRewritten"`
	// PointBackfillRowsRewritten: benchmark rows whose metrics or offload
	// mode a point backfill corrected; ChangelogRowsRewritten: changelog
	// entries and workflow runs (append_only) a changelog backfill
	// corrected.
	PointBackfillRowsRewritten int64 `json:"pointBackfillRowsRewritten"`
	ChangelogRowsRewritten     int64 `json:"changelogRowsRewritten"`
	// Actions are the ledger entries that found stored data, in ledger
	// order; entries that found nothing are not listed.
	Actions []OverrideAction `json:"actions"`
	// NotFound are the purge entries (purged_run, purged_point) naming a
	// run, or an attempt of one, that the database neither stores nor has
	// an ingest of: most likely a mistyped id. Attempt 0: any attempt.
	NotFound []OverrideAction `json:"notFound,omitempty"`
}

// OverrideAction is one ledger entry applied: its kind (conclusion,
// purged_run, purged_point, retired_gpu_power, point_backfill,
// changelog_backfill), the run and attempt it
// names (0: every attempt), what it names within it, why, and how many
// stored rows it deleted or rewrote.
type OverrideAction struct {
	Kind    string `json:"kind"`
	RunID   int64  `json:"runId"`
	Attempt int    `json:"attempt,omitempty"`
	Target  string `json:"target,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Rows    int64  `json:"rows"`
}

// Changed reports whether the plan changed anything: any count above 0.
func (r OverrideResult) Changed() bool {
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Int64 && f.Int() > 0 {
			return true
		}
	}
	return false
}

// Add adds o's counts (every int64 field) and actions to r's.
func (r *OverrideResult) Add(o OverrideResult) {
	addCounters(reflect.ValueOf(r).Elem(), reflect.ValueOf(o))
	r.Actions = append(r.Actions, o.Actions...)
	r.NotFound = append(r.NotFound, o.NotFound...)
}
