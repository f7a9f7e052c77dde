package trace

import (
	"bufio"
	"encoding/json"
	"io"
	"math"

	"github.com/inferencex/ingest/schema"
)

// Versions of the derived payloads; a change of shape bumps them.
const (
	StatsVersion    = 1
	ChartVersion    = 1
	TimelineVersion = 1
)

// Derived are the payloads of one trace sidecar.
type Derived struct {
	AggregateStats json.RawMessage
	ChartSeries    json.RawMessage
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

type aggregateStats struct {
	Version            int        `json:"version"`
	Records            Accounting `json:"records"`
	DurationS          float64    `json:"durationS"`
	ISL                *Block     `json:"isl"`
	OSL                *Block     `json:"osl"`
	TTFTS              *Block     `json:"ttftS"`
	E2ELS              *Block     `json:"e2elS"`
	ITLS               *Block     `json:"itlS"`
	FullResponseITLS   *Block     `json:"fullResponseItlS"`
	E2ELPerOSL         *Block     `json:"e2elPerOsl"`
	KVCacheUtil        *Block     `json:"kvCacheUtil"`
	PrefixCacheHitRate *Block     `json:"prefixCacheHitRate"`
}

type queuePoint struct {
	T       int     `json:"t"`
	Running float64 `json:"running"`
	Waiting float64 `json:"waiting"`
	Total   float64 `json:"total"`
}

type chartSeries struct {
	Version            int                  `json:"version"`
	Adapter            string               `json:"adapter"`
	MetricCount        int                  `json:"metricCount"`
	StartNs            int64                `json:"startNs"`
	EndNs              int64                `json:"endNs"`
	DurationS          float64              `json:"durationS"`
	TimeslicesCount    int                  `json:"timeslicesCount"`
	KVCacheUsage       []*float64           `json:"kvCacheUsage"`
	PrefixCacheHitRate []*float64           `json:"prefixCacheHitRate"`
	QueueDepth         []queuePoint         `json:"queueDepth"`
	PromptTokensBySrc  map[string][]float64 `json:"promptTokensBySource"`
	PrefillTps         []float64            `json:"prefillTps"`
	DecodeTps          []float64            `json:"decodeTps"`
	PrefixCacheHitsTps []float64            `json:"prefixCacheHitsTps"`
	ClientCompletions  []int                `json:"clientCompletions"`
	ClientOutputTps    []float64            `json:"clientOutputTps"`
	ClientInFlight     []int                `json:"clientInFlight"`
}

// timelineHeader is the request timeline without its requests, which
// WriteTimeline streams one by one.
type timelineHeader struct {
	Version   int     `json:"version"`
	StartNs   int64   `json:"startNs"`
	EndNs     int64   `json:"endNs"`
	DurationS float64 `json:"durationS"`
}

// WriteTimeline writes the request timeline JSON,
// {version, startNs, endNs, durationS, requests: [...]}, one request at a
// time: the document is never held whole.
func (p *Profile) WriteTimeline(w io.Writer) error {
	duration := 0.0
	if p.EndNs > p.StartNs {
		duration = round(float64(p.EndNs-p.StartNs) / 1e9)
	}
	head, err := json.Marshal(timelineHeader{Version: TimelineVersion, StartNs: p.StartNs, EndNs: p.EndNs, DurationS: duration})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"requests":[`)
	first := true
	var werr error
	p.each(func(r *req) {
		if werr != nil {
			return
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		out := p.request(r)
		b, err := json.Marshal(&out)
		if err == nil {
			_, err = bw.Write(b)
		}
		werr = err
	})
	if werr != nil {
		return werr
	}
	bw.WriteString("]}")
	return bw.Flush()
}

// Derive computes the payloads of a sidecar from its profile and, when
// present, its server metrics (sm may be nil).
func Derive(p *Profile, sm *ServerMetrics) (*Derived, error) {
	d := &Derived{Metrics: DerivedMetrics{}}
	duration := 0.0
	if p.EndNs > p.StartNs {
		duration = round(float64(p.EndNs-p.StartNs) / 1e9)
	}
	st := aggregateStats{Version: StatsVersion, Records: p.Accounting, DurationS: duration,
		ISL: Summarize(p.isl), OSL: Summarize(p.osl), TTFTS: Summarize(p.ttft), E2ELS: Summarize(p.e2el),
		ITLS: Summarize(p.itl), E2ELPerOSL: Summarize(p.e2elPerOSL)}
	fr := p.fullResponseITL
	if len(fr) == 0 {
		fr = p.reconstructedITL
	}
	st.FullResponseITLS = Summarize(append([]float64(nil), fr...))
	cs := chartSeries{Version: ChartVersion, Adapter: "none", StartNs: p.StartNs, EndNs: p.EndNs, DurationS: duration,
		PromptTokensBySrc: map[string][]float64{}}
	cs.ClientCompletions, cs.ClientOutputTps, cs.ClientInFlight = clientSeries(p)
	if sm != nil {
		cs.Adapter, cs.MetricCount, cs.TimeslicesCount = sm.Adapter, sm.MetricCount, sm.slices
		var kv, hit []float64
		for i := 0; i < sm.slices; i++ {
			var u *float64
			if sm.kvUsageN[i] > 0 {
				v := round(sm.kvUsage[i] / float64(sm.kvUsageN[i]))
				u = &v
				kv = append(kv, v)
			}
			cs.KVCacheUsage = append(cs.KVCacheUsage, u)
			var h *float64
			if sm.prompt[i] > 0 {
				hits := sm.prefixHits[i]
				if arr, ok := hbmSlice(sm); ok {
					hits = arr[i]
				}
				v := round(math.Min(hits/sm.prompt[i], 1))
				h = &v
				hit = append(hit, v)
			}
			cs.PrefixCacheHitRate = append(cs.PrefixCacheHitRate, h)
			cs.QueueDepth = append(cs.QueueDepth, queuePoint{T: i, Running: round(sm.running[i]), Waiting: round(sm.waiting[i]),
				Total: round(sm.running[i] + sm.waiting[i])})
			cs.PrefillTps = append(cs.PrefillTps, round(sm.prompt[i]))
			cs.DecodeTps = append(cs.DecodeTps, round(sm.generation[i]))
			cs.PrefixCacheHitsTps = append(cs.PrefixCacheHitsTps, round(sm.prefixHits[i]))
		}
		for src, arr := range sm.bySource {
			out := make([]float64, sm.slices)
			for i := range out {
				if i < len(arr) {
					out[i] = round(arr[i])
				}
			}
			cs.PromptTokensBySrc[src] = out
		}
		st.KVCacheUtil, st.PrefixCacheHitRate = Summarize(kv), Summarize(hit)
		if gpu, cpu, ok := sm.CacheHitRates(); ok {
			d.Metrics[schema.DerivedMetricPrefix+"gpu_cache_hit_rate"] = gpu
			if cpu != nil {
				d.Metrics[schema.DerivedMetricPrefix+"cpu_cache_hit_rate"] = *cpu
			}
		}
		d.KVCapacity = sm.KVCapacity()
	}
	fullResponseITL(d.Metrics, p.reconstructedITL)
	var err error
	if d.AggregateStats, err = json.Marshal(st); err != nil {
		return nil, err
	}
	if d.ChartSeries, err = json.Marshal(cs); err != nil {
		return nil, err
	}
	return d, nil
}

func hbmSlice(sm *ServerMetrics) ([]float64, bool) {
	var out []float64
	for _, s := range hbmSources {
		arr, ok := sm.bySource[s]
		if !ok {
			continue
		}
		if out == nil {
			out = make([]float64, sm.slices)
		}
		for i := range arr {
			out[i] += arr[i]
		}
	}
	return out, out != nil
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

// clientSeries are per-second series seen by the client: completions and
// output tokens of kept requests by end second, and requests in flight.
func clientSeries(p *Profile) (done []int, outTps []float64, inFlight []int) {
	if p.EndNs <= p.StartNs {
		return []int{}, []float64{}, []int{}
	}
	n := int((p.EndNs-p.StartNs)/1e9) + 1
	if n > maxSlices {
		return []int{}, []float64{}, []int{}
	}
	done, outTps, inFlight = make([]int, n), make([]float64, n), make([]int, n)
	delta := make([]int, n+1)
	p.each(func(r *req) {
		if r.startNs <= 0 || r.endNs < r.startNs {
			return
		}
		s, e := int((r.startNs-p.StartNs)/1e9), int((r.endNs-p.StartNs)/1e9)
		delta[s]++
		delta[e+1]--
		if r.kept {
			done[e]++
			outTps[e] += float64(r.osl)
		}
	})
	cur := 0
	for i := 0; i < n; i++ {
		cur += delta[i]
		inFlight[i] = cur
	}
	return done, outTps, inFlight
}
