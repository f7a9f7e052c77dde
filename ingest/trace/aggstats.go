package trace

import "encoding/json"

// AggregateStatsVersion is the version of the aggregate statistics payload
// (agentic_trace_replay.aggregate_stats) whose shape and values this package
// writes: the dashboard reads a stored bundle only at exactly this version
// and recomputes any other from the raw blobs.
const AggregateStatsVersion = 7

// statSamples are the profile's samples of the aggregate statistics, taken
// from every record outside a non-profiling phase (a record without a phase,
// or with an empty one, counts; errors and cancellations are not left out):
// ISL and OSL as read, and E2E latency per output token (seconds) of the
// records whose latency, TTFT, ISL and OSL are all positive.
type statSamples struct {
	isl, osl, e2elPerOSL []float64
}

func (s *statSamples) add(rec *record) {
	if ph := rec.Metadata.Phase; ph != nil && *ph != "" && *ph != "profiling" {
		return
	}
	m := &rec.Metrics
	isl, hasISL := val(m.ISL)
	osl, hasOSL := val(m.OSL)
	if hasISL {
		s.isl = append(s.isl, isl)
	}
	if hasOSL {
		s.osl = append(s.osl, osl)
	}
	rl, hasRL := val(m.Latency)
	tt, hasTT := val(m.TTFT)
	if hasRL && hasTT && hasISL && hasOSL && rl > 0 && tt > 0 && isl > 0 && osl > 0 {
		s.e2elPerOSL = append(s.e2elPerOSL, rl/1000/osl)
	}
}

type aggregateStats struct {
	Version            int          `json:"version"`
	ISL                *Percentiles `json:"isl"`
	OSL                *Percentiles `json:"osl"`
	KVCacheUtil        *Percentiles `json:"kvCacheUtil"`
	PrefixCacheHitRate *Percentiles `json:"prefixCacheHitRate"`
	E2ELPerOSL         *Percentiles `json:"e2elPerOsl"`
}

// aggregateStatsJSON is the aggregate statistics payload, version 7: ISL,
// OSL and E2E-latency-per-output-token percentiles from the profile, KV
// cache utilization and prefix-cache hit rate percentiles from the server
// metrics' profiling block (null without an export). It sorts the profile's
// samples in place.
func aggregateStatsJSON(p *Profile, sm *ServerMetrics) (json.RawMessage, error) {
	st := aggregateStats{Version: AggregateStatsVersion, ISL: percentilesOf(p.stats.isl), OSL: percentilesOf(p.stats.osl),
		E2ELPerOSL: percentilesOf(p.stats.e2elPerOSL)}
	if sm != nil && sm.chart != nil {
		kv, hit := sm.chart.serverSamples(sm.streamed())
		st.KVCacheUtil, st.PrefixCacheHitRate = percentilesOf(kv), percentilesOf(hit)
	}
	return json.Marshal(st)
}
