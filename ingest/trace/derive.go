package trace

import (
	"encoding/json"

	"github.com/inferencex/ingest/schema"
)

// Derived are the payloads of one trace sidecar.
type Derived struct {
	AggregateStats json.RawMessage
	// ChartSeries is nil without a server metrics export.
	ChartSeries json.RawMessage
	// Metrics are written back to the linked benchmark rows.
	Metrics    DerivedMetrics
	KVCapacity *int64
}

// DerivedMetrics are the metrics derived from a trace, every key starting
// with schema.DerivedMetricPrefix. They are added to the linked benchmark
// rows next to the published metrics, which they never replace:
//
//   - derived_gpu_cache_hit_rate: Σ HBM prefix-cache hit tokens (the
//     "cache hit (HBM)", "cache hit" or "local_cache_hit" sources of
//     prompt tokens, else the prefix-cache hits) / Σ prompt tokens, over
//     the server metrics' time slices;
//   - derived_cpu_cache_hit_rate: Σ ("cache hit (CPU offload)" +
//     "external_kv_transfer") / Σ prompt tokens, when the server reports
//     those sources;
//   - derived_<stat>_full_response_itl, stat in mean, median, p75, p90,
//     p95, p99, std: the per-request inter-token latency
//     (request_end − request_start − TTFT) / (OSL − 1) of the profiled,
//     error-free requests; derived_<stat>_full_response_intvty is
//     1 / derived_<stat>_full_response_itl (std: the population standard
//     deviation of the per-request 1 / ITL).
type DerivedMetrics map[string]float64

// Derive computes the payloads of a sidecar from its profile and, when
// present, its server metrics (sm may be nil): the aggregate statistics
// (version 10), the chart series (version 20, nil without server metrics
// or for a point whose chart is withheld)
// and the metrics written to the linked rows. The request timeline is
// written separately (Profile.WriteTimeline). It sorts the profile's samples
// in place.
func Derive(p *Profile, sm *ServerMetrics) (*Derived, error) {
	d := &Derived{Metrics: DerivedMetrics{}}
	var err error
	if d.AggregateStats, err = aggregateStatsJSON(p, sm); err != nil {
		return nil, err
	}
	if sm != nil {
		if !sm.chart.point.ChartWithheld() {
			if d.ChartSeries, err = json.Marshal(sm.chart.build()); err != nil {
				return nil, err
			}
		}
		if gpu, cpu, ok := sm.CacheHitRates(); ok {
			d.Metrics[schema.DerivedMetricPrefix+"gpu_cache_hit_rate"] = gpu
			if cpu != nil {
				d.Metrics[schema.DerivedMetricPrefix+"cpu_cache_hit_rate"] = *cpu
			}
		}
		d.KVCapacity = sm.KVCapacity()
	}
	fullResponseITL(d.Metrics, p.reconstructedITL)
	return d, nil
}

// fullResponseITL sets the derived full-response ITL stats reconstructed
// from the profile and their interactivity (intvty = 1/itl).
func fullResponseITL(m DerivedMetrics, itl []float64) {
	if len(itl) == 0 {
		return
	}
	vals := append([]float64(nil), itl...)
	b := Summarize(vals)
	stats := map[string]float64{"mean": b.Mean, "median": b.P50, "p75": b.P75, "p90": b.P90, "p95": b.P95, "p99": b.P99}
	for st, v := range stats {
		if v <= 0 {
			continue
		}
		m[schema.DerivedMetricPrefix+st+"_full_response_itl"] = v
		m[schema.DerivedMetricPrefix+st+"_full_response_intvty"] = round(1 / v)
	}
	inv := make([]float64, 0, len(itl))
	for _, v := range itl {
		if v > 0 {
			inv = append(inv, 1/v)
		}
	}
	m[schema.DerivedMetricPrefix+"std_full_response_itl"] = b.Std
	m[schema.DerivedMetricPrefix+"std_full_response_intvty"] = round(pstdev(inv))
}
