package schema

// RunReadBack is what `ingest verify` reads back of one run from a
// database: the ledger's finished ingests of the run, the rows stored,
// their provenance, and latest_benchmarks as it is and as the rules would
// have it.
type RunReadBack struct {
	// Ingests are the run's finished (succeeded or completed with
	// failures) ingests in the ledger, oldest first.
	Ingests []Summary
	// Stored counts the run's rows by table: benchmark_results,
	// eval_results, run_stats.
	Stored map[string]int64
	// OverridesTouched: an override deleted or rewrote stored rows of the
	// run (an ingest's overrideRowsDeleted, a purged run, or an
	// `ingest overrides apply` whose actions name it), so stored counts
	// are not the sum of what the ingests wrote.
	OverridesTouched bool
	// ForeignIngest counts the run's rows, by table, whose ingest_id is
	// not a finished ingest of the run; UnrecordedArtifact those whose
	// source_artifact is not among that ingest's artifact records.
	ForeignIngest      map[string]int64
	UnrecordedArtifact map[string]int64
	// Shown are the run's benchmark_results ids latest_benchmarks serves;
	// Expected those it serves once every curve is recomputed by the rules
	// (in a transaction rolled back).
	Shown, Expected []int64
}
