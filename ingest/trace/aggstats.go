package trace

import "encoding/json"

// AggregateStatsVersion is the version of the aggregate statistics payload
// (agentic_trace_replay.aggregate_stats) whose shape and values this package
// writes: the dashboard reads a stored bundle only at exactly this version
// and recomputes any other from the raw blobs.
const AggregateStatsVersion = 10

// statSamples are the profile's samples of the aggregate statistics, taken
// from every record that is neither in a non-profiling phase (a record
// without a phase, or with an empty one, counts) nor cancelled
// (metadata.was_cancelled true); records with an error count: ISL and OSL
// as read, and E2E latency per output token (seconds) of the records whose
// latency, TTFT, ISL and OSL are all positive.
type statSamples struct {
	isl, osl, e2elPerOSL []float64
}

func (s *statSamples) add(rec *record) {
	if ph := rec.Metadata.Phase; ph != nil && *ph != "" && *ph != "profiling" {
		return
	}
	if rec.Metadata.WasCancelled {
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
	Version            int             `json:"version"`
	ISL                *Percentiles    `json:"isl"`
	OSL                *Percentiles    `json:"osl"`
	KVCacheUtil        *Percentiles    `json:"kvCacheUtil"`
	PrefixCacheHitRate *Percentiles    `json:"prefixCacheHitRate"`
	E2ELPerOSL         *Percentiles    `json:"e2elPerOsl"`
	SequenceLengths    sequenceLengths `json:"sequenceLengths"`
}

// sequenceLengths are the ISL and OSL sketches of the payload, each null
// without a sample the sketch takes.
type sequenceLengths struct {
	ISL *TokenLengthSketch `json:"isl"`
	OSL *TokenLengthSketch `json:"osl"`
}

// aggregateStatsJSON is the aggregate statistics payload, version 10: ISL,
// OSL and E2E-latency-per-output-token percentiles from the profile, KV
// cache utilization and prefix-cache hit rate percentiles from the server
// metrics' profiling block (null without an export), and sequenceLengths,
// the token length sketches of the same ISL and OSL samples. The sketches
// are taken before percentilesOf reuses the samples' slices, which it
// leaves sorted.
func aggregateStatsJSON(p *Profile, sm *ServerMetrics) (json.RawMessage, error) {
	st := aggregateStats{Version: AggregateStatsVersion,
		SequenceLengths: sequenceLengths{ISL: tokenLengthSketchOf(p.stats.isl), OSL: tokenLengthSketchOf(p.stats.osl)}}
	st.ISL, st.OSL, st.E2ELPerOSL = percentilesOf(p.stats.isl), percentilesOf(p.stats.osl), percentilesOf(p.stats.e2elPerOSL)
	if sm != nil {
		kv, hit := sm.chart.serverSamples()
		st.KVCacheUtil, st.PrefixCacheHitRate = percentilesOf(kv), percentilesOf(hit)
	}
	return json.Marshal(st)
}
