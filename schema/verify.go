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
	// Adopted counts, by table, the rows `ingest adopt` took over from the
	// reference ingest (written by no ingest of ours); AdoptedRun says the
	// ledger holds the adopt's row of the run.
	Adopted    map[string]int64
	AdoptedRun bool
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
	// Content is the recompute of the run's benchmark rows' content
	// digests; Samples the count of its eval rows' samples.
	Content ContentReadBack
	Samples SamplesReadBack
}

// ContentReadBack is what `ingest verify` found recomputing the content
// digest of every benchmark row of a run from its stored key and values.
type ContentReadBack struct {
	// Checked rows were recomputed; Mismatched of them no longer hash to
	// their digest, the first few named in Mismatches.
	Checked, Mismatched int64
	Mismatches          []string
	// Derived rows hold values the ingest derives after writing them
	// (AgentX server metrics, trace or server-log links) or had their
	// digest cleared by a migration: not recomputed.
	Derived int64
}

// SamplesReadBack is what `ingest verify` found counting the samples of
// every eval row of a run against the lines its ingest recorded.
type SamplesReadBack struct {
	// Checked eval rows have a recorded samples file; Mismatched of them
	// hold another number of samples, the first few named in Mismatches.
	Checked, Mismatched int64
	Mismatches          []string
	// Samples is the number of samples the checked rows recorded.
	Samples int64
}
