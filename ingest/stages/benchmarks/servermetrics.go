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
	r.ServerMetricsFrom = writtenInputs(r.Point.Config, stored)
}

// writtenInputs is what a read-back of the written row would give the
// traces stage (store.TraceRowLinks): the numbers among the server-metric
// inputs, and whether a replaced key holds anything else.
func writtenInputs(c schema.Config, stored map[string]any) *schema.TraceRowLink {
	link := &schema.TraceRowLink{Config: c, Metrics: map[string]float64{}}
	for _, k := range trace.ServerMetricInputs() {
		if f, ok := benchmark.FiniteJSONNumber(stored[k]); ok {
			link.Metrics[k] = f
		}
	}
	for _, k := range trace.ServerMetricsReplaced() {
		if v, ok := stored[k]; ok {
			if _, number := benchmark.FiniteJSONNumber(v); !number {
				link.OwnedOther = true
			}
		}
	}
	return link
}
