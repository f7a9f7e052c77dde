package schema

// PowerWarning is a benchmark point whose published power disagrees with
// the telemetry stored for it by more than the tolerance, or whose
// telemetry contradicts its power audit. It does not fail the point: the
// numbers are written as published and the report lists the discrepancy.
type PowerWarning struct {
	Artifact string `json:"artifact"`
	File     string `json:"file"`
	// Field is the published key compared (avg_power_w, total_gpu_energy_j,
	// observed_gpu_count, amd_energy_accumulator).
	Field     string  `json:"field"`
	Published float64 `json:"published"`
	Measured  float64 `json:"measured"`
	// RelDiff is |measured − published| / |published|.
	RelDiff float64 `json:"relDiff"`
}
