package schema

// CurveImpact is what one transaction did to one curve of latest_benchmarks
// (a benchmark_curve_scope): the rows it showed before and shows after.
type CurveImpact struct {
	CurveID int64
	// Scope is the curve's benchmark_curve_scope, as JSON.
	Scope  string
	Before []CurvePoint
	After  []CurvePoint
}

// CurvePoint is one row of latest_benchmarks: the benchmark row, what
// names its point, and the snapshot it belongs to.
type CurvePoint struct {
	ResultID              int64
	WorkflowRunID         int64
	ConfigID              int64
	BenchmarkType         string
	ISL, OSL              *int
	OffloadMode           string
	RecipeFingerprint     *string
	Conc                  int
	SnapshotDate          string
	SnapshotWorkflowRunID int64
	// Deleted: the row was shown before and deleted since (by an
	// override); its key and values are those its point kept, its GitHub
	// runs 0 when they were purged with it.
	Deleted bool
	// GitHubRunID and RunAttempt name the row's run; SnapshotGitHubRunID
	// the snapshot's.
	GitHubRunID         int64
	RunAttempt          int
	SnapshotGitHubRunID int64
	// Config is the row's config (its arm: topology, decoding).
	Config Config
	// Values are the row's metrics the impact section compares.
	Values PointValues
}
