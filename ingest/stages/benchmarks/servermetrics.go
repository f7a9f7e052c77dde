package benchmarks

import (
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// withServerMetrics gives an AgentX row the server-metric keys the ingest
// owns, derived from the row alone (its config and client totals), so
// that they are written with the row rather than by an update of it. The
// traces stage derives them again with the point's raw server metrics and
// worker logs, and writes only the rows whose values that changes.
func withServerMetrics(r *schema.StagedBenchmark) {
	if r.Point.BenchmarkType != schema.BenchmarkAgenticTraces {
		return
	}
	numeric := make(map[string]float64, len(r.Point.Metrics))
	for k, v := range r.Point.Metrics {
		if f, ok := benchmark.FiniteJSONNumber(v); ok {
			numeric[k] = f
		}
	}
	owned := trace.RowServerMetrics(numeric, trace.DeriveServerMetrics(trace.RowInput(r.Point.Config, numeric)))
	replaced := trace.ServerMetricsReplaced()
	stored := make(map[string]any, len(r.Point.Metrics)+len(owned))
	for k, v := range r.Point.Metrics {
		stored[k] = v
	}
	for _, k := range replaced {
		delete(stored, k)
	}
	for k, v := range owned {
		stored[k] = v
	}
	r.StoredMetrics = stored
}
