package benchmarks

import (
	"maps"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// The server-metric keys withServerMetrics reads (trace.ServerMetricInputs)
// and replaces (trace.ServerMetricsReplaced): fixed lists, built once
// rather than per row.
var (
	serverMetricInputs   = trace.ServerMetricInputs()
	serverMetricsReplace = trace.ServerMetricsReplaced()
)

// withServerMetrics gives an AgentX row the server-metric keys the ingest
// owns, derived from the row alone (its config and client totals), so
// that they are written with the row rather than by an update of it. The
// traces stage derives them again with the point's raw server metrics and
// worker logs, and writes only the rows whose values that changes.
//
// The derivation reads the numbers among the server-metric inputs only,
// as the traces stage reads them back from a stored row.
func withServerMetrics(r *schema.StagedBenchmark) {
	if r.Point.BenchmarkType != schema.BenchmarkAgenticTraces {
		return
	}
	numeric := numbersAmong(r.Point.Metrics)
	owned := trace.RowServerMetrics(numeric, trace.DeriveServerMetrics(trace.RowInput(r.Point.Config, numeric)))
	// A clone copies the map's table whole, where a loop of assignments
	// hashed every key again (most of this function's time).
	stored := maps.Clone(r.Point.Metrics)
	if stored == nil {
		stored = make(map[string]any, len(owned))
	}
	for _, k := range serverMetricsReplace {
		delete(stored, k)
	}
	for k, v := range owned {
		stored[k] = v
	}
	r.StoredMetrics = stored
	r.ServerMetricsFrom = writtenInputs(r.Point.Config, stored)
}

// numbersAmong is the finite numbers of metrics among the server-metric
// inputs.
func numbersAmong(metrics map[string]any) map[string]float64 {
	// Grown as found, not sized for every input: a row holds a few of them
	// as a rule, and the map of every written AgentX row is kept until the
	// traces stage.
	out := map[string]float64{}
	for _, k := range serverMetricInputs {
		if f, ok := benchmark.FiniteJSONNumber(metrics[k]); ok {
			out[k] = f
		}
	}
	return out
}

// writtenInputs is what a read-back of the written row would give the
// traces stage (store.TraceRowLinks): the numbers among the server-metric
// inputs, and whether a replaced key holds anything else.
func writtenInputs(c schema.Config, stored map[string]any) *schema.TraceRowLink {
	link := &schema.TraceRowLink{Config: c, Metrics: numbersAmong(stored)}
	for _, k := range serverMetricsReplace {
		if v, ok := stored[k]; ok {
			if _, number := benchmark.FiniteJSONNumber(v); !number {
				link.OwnedOther = true
			}
		}
	}
	return link
}
