package trace

import (
	"bytes"
	"math"
	"slices"

	json "github.com/goccy/go-json"

	"github.com/inferencex/ingest/schema"
)

// ChartSeriesVersion is the version of the chart series payload
// (agentic_trace_replay.chart_series) whose shape and values this package
// writes: the dashboard reads a stored payload only at exactly this version
// and recomputes any other from the server metrics blob.
const ChartSeriesVersion = 20

// inMemoryExportLimit is the size of server_metrics_export.json up to which
// the dashboard parses the whole document; a larger one it streams, keeping
// only the metrics it charts (for the chart series) or aggregates (for the
// statistics). The two differ in what they see: the whole document times
// the series over every metric and finds the scrape cadence and the
// sources among all of them; the streamed one sees the kept metrics only.
// Both are reproduced, chosen by the file's size.
const inMemoryExportLimit = 128 << 20

// Metric names the charts read (chartKeys) and those the aggregate
// statistics read on a streamed export (aggregateKeys).
var (
	chartKeys = setOf(
		"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:prompt_tokens", "vllm:generation_tokens",
		"vllm:prompt_tokens_by_source",
		"sglang:token_usage", "sglang:cached_tokens", "sglang:prompt_tokens", "sglang:generation_tokens",
		"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:realtime_tokens",
		"sglang:hicache_host_used_tokens", "sglang:hicache_host_total_tokens",
		"atom:kv_cache_usage_ratio", "atom:prefix_cache_cached_tokens", "atom:prefix_cache_full_tokens",
		"atom:prefix_cache_hit_ratio", "atom:requests_running", "atom:requests_waiting", "atom:prompt_tokens",
		"atom:generation_tokens",
		"dynamo_component_gpu_cache_usage_percent", "trtllm_kv_cache_utilization", "trtllm_kv_cache_host_utilization",
		"trtllm_kv_cache_hit_rate", "trtllm_prompt_cached_tokens", "trtllm_prompt_cached_tokens_total",
		"trtllm_prompt_tokens", "trtllm_prompt_tokens_total", "trtllm_prefill_batch_tokens", "trtllm_generation_tokens",
		"trtllm_generation_tokens_total", "trtllm_num_requests_running", "trtllm_num_requests_waiting")
	aggregateKeys = setOf(
		"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
		"vllm:gpu_prefix_cache_hits", "vllm:gpu_prefix_cache_queries",
		"atom:kv_cache_usage_ratio", "atom:prefix_cache_cached_tokens", "atom:prefix_cache_full_tokens",
		"atom:prefix_cache_hit_ratio",
		"trtllm_kv_cache_utilization", "trtllm_kv_cache_hit_rate", "trtllm_prompt_cached_tokens",
		"trtllm_prompt_cached_tokens_total", "trtllm_prompt_tokens", "trtllm_prompt_tokens_total")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Export phases: the profiling block ("metrics") and the warmup block
// ("warmup_metrics"). The charts span both; the statistics read profiling.
const (
	phaseProfiling = 0
	phaseWarmup    = 1
)

// field is the timeslice value a metric is read by: the average (gauges),
// the rate (counters), or the sum over the slice's duration (histograms).
type field int

const (
	fieldAvg field = iota
	fieldRate
	fieldSumRate
)

// rateMetrics are the counters the charts and statistics read by their
// rate: every name of their counter fallbacks and prompt-token sources.
var rateMetrics = setOf(slices.Concat(hitNames, queryNames, promptNames, decodeNames, statHitNames, statQueryNames,
	[]string{"vllm:prompt_tokens_by_source", "sglang:realtime_tokens"})...)

// fieldOf is the field the charts and statistics read a metric by: every
// metric they read is read by one field only.
func fieldOf(name string) field {
	switch {
	case rateMetrics[name]:
		return fieldRate
	case name == "trtllm_prefill_batch_tokens":
		return fieldSumRate
	}
	return fieldAvg
}

type sliceIn struct {
	StartNs bare `json:"start_ns"`
	EndNs   bare `json:"end_ns"`
	Avg     bare `json:"avg"`
	Rate    bare `json:"rate"`
	Sum     bare `json:"sum"`
}

type seriesIn struct {
	EndpointURL *string         `json:"endpoint_url"`
	Labels      json.RawMessage `json:"labels"`
	Timeslices  []sliceIn       `json:"timeslices"`
}

type metricIn struct {
	Series []json.RawMessage `json:"series"`
}

// sample is one timeslice of a read metric: its start (ns) and value.
type sample struct{ start, value float64 }

// rawSeries is one series of the export as the charts and statistics see
// it: where it came from, its labels, its shape (slice count, first start,
// last end, scrape cadence) and, for a metric they read, its samples.
type rawSeries struct {
	endpoint *string
	labels   map[string]string
	// labelsJSON is the labels object as JavaScript would print it (a
	// prompt-token source without a source label is named by it).
	labelsJSON  string
	slices      int
	first, last bare
	// tick is the median positive gap (at most five minutes) between
	// consecutive starts; hasTick is false when there is none.
	tick    float64
	hasTick bool
	samples []sample
}

// maxTickNs is the widest gap read as a scrape cadence (five minutes).
const maxTickNs = 300 * 1e9

// newRawSeries reads one series; samples are kept when keep is set.
func newRawSeries(name string, s *seriesIn, labels map[string]string, keep bool) *rawSeries {
	rs := &rawSeries{endpoint: s.EndpointURL, labels: labels, slices: len(s.Timeslices)}
	ts := s.Timeslices
	if len(ts) > 0 {
		rs.first, rs.last = ts[0].StartNs, ts[len(ts)-1].EndNs
	}
	var gaps []float64
	for i := 1; i < len(ts); i++ {
		a, b := ts[i-1].StartNs, ts[i].StartNs
		if !a.set || !b.set {
			continue
		}
		if g := b.v - a.v; g > 0 && g <= maxTickNs {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		rs.tick, rs.hasTick = gaps[len(gaps)>>1], true
	}
	if !keep {
		return rs
	}
	f := fieldOf(name)
	for _, t := range ts {
		if !t.StartNs.set {
			continue
		}
		var v bare
		switch f {
		case fieldAvg:
			v = t.Avg
		case fieldRate:
			v = t.Rate
		case fieldSumRate:
			if t.Sum.set && t.EndNs.set {
				if d := (t.EndNs.v - t.StartNs.v) / 1e9; d > 0 {
					v = bare{v: t.Sum.v / d, set: true}
				}
			}
		}
		if v.set && schema.Finite(v.v) {
			rs.samples = append(rs.samples, sample{start: t.StartNs.v, value: v.v})
		}
	}
	return rs
}

// chartCollector gathers, while the export streams by, every series the
// dashboard's chart and statistics code would see: the samples of the
// metrics they read and the shape and labels of the others. Series stay
// in file order per block; the dashboard's order (the profiling block's
// metrics, then the warmup block's others; per metric its profiling series,
// then its warmup series) is settled when the payloads are built.
type chartCollector struct {
	point PointContext
	// streamed: the dashboard would stream the export, seeing the charted
	// (or aggregated) metrics only.
	streamed bool
	// names are the metric names of each block in file order, got their
	// series (an entry for every name, series or not).
	names [2][]string
	got   [2]map[string][]*rawSeries
	// input is the export's input_config; normalized is set once the
	// point's adapter has rewritten the series (llm-d only).
	input      inputConfig
	normalized bool
}

// normalize applies the point's adapter to both blocks, once.
func (c *chartCollector) normalize() {
	if c.normalized {
		return
	}
	c.normalized = true
	if c.point.adapter() == adapterLLMD {
		for ph := range c.got {
			normalizeLLMD(c.got[ph], c.input, c.point.Disagg)
		}
	}
}

func newChartCollector(ctx PointContext, streamed bool) *chartCollector {
	c := &chartCollector{point: ctx, streamed: streamed}
	for ph := range c.got {
		c.got[ph] = map[string][]*rawSeries{}
	}
	return c
}

// streamed reports whether the dashboard would stream the export rather
// than parse it whole.
func (m *ServerMetrics) streamed() bool { return m.exportSize > inMemoryExportLimit }

// wanted reports whether the series of a metric are read beyond their span.
func wanted(name string) bool { return chartKeys[name] || aggregateKeys[name] }

// sawMetric notes a metric of a block, series or not.
func (c *chartCollector) sawMetric(phase int, name string) {
	if _, ok := c.got[phase][name]; !ok {
		c.got[phase][name] = nil
		c.names[phase] = append(c.names[phase], name)
	}
}

// metric takes every series of one metric decoded whole.
func (c *chartCollector) metric(phase int, name string, raw json.RawMessage) error {
	c.sawMetric(phase, name)
	var mi metricIn
	if err := json.Unmarshal(raw, &mi); err != nil {
		return err
	}
	for _, s := range mi.Series {
		if err := c.series(phase, name, s); err != nil {
			return err
		}
	}
	return nil
}

// series takes one series of a metric, in file order.
func (c *chartCollector) series(phase int, name string, raw json.RawMessage) error {
	c.sawMetric(phase, name)
	var s seriesIn
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	labels, err := parseLabels(s.Labels)
	if err != nil {
		return err
	}
	rs := newRawSeries(name, &s, labels, wanted(name))
	if name == "vllm:prompt_tokens_by_source" {
		rs.labelsJSON = stringifyLabels(s.Labels)
	}
	c.got[phase][name] = append(c.got[phase][name], rs)
	return nil
}

// parseLabels reads a series' labels; none when absent or null.
func parseLabels(raw json.RawMessage) (map[string]string, error) {
	labels := map[string]string{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(raw, &labels); err != nil {
			return nil, err
		}
	}
	return labels, nil
}

// stringifyLabels is the labels object as compact JSON, {} when absent.
func stringifyLabels(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return string(t)
	}
	return b.String()
}

// metricsMap is the dashboard's metric map: names in its order, and per
// name the series in its order.
type metricsMap struct {
	names  []string
	series map[string][]*rawSeries
}

// has reports whether the map holds a metric of that name.
func (m *metricsMap) has(name string) bool {
	_, ok := m.series[name]
	return ok
}

// merged is the map the charts read: both blocks merged (the profiling
// block's names first, then the warmup block's others; per name the
// profiling series, then the warmup series), or the profiling block alone.
// keep, when set, limits it to the names a streamed read collects.
func (c *chartCollector) merged(phases []int, keep func(string) bool) *metricsMap {
	m := &metricsMap{series: map[string][]*rawSeries{}}
	for _, ph := range phases {
		for _, n := range c.names[ph] {
			if keep != nil && !keep(n) {
				continue
			}
			if _, ok := m.series[n]; !ok {
				m.names = append(m.names, n)
				m.series[n] = nil
			}
		}
	}
	for _, n := range m.names {
		for _, ph := range phases {
			m.series[n] = append(m.series[n], c.got[ph][n]...)
		}
	}
	return m
}

var bothPhases, profilingOnly = []int{phaseProfiling, phaseWarmup}, []int{phaseProfiling}

// Point is one sample of a chart series: seconds from the series' start.
type Point struct {
	T     float64 `json:"t"`
	Value float64 `json:"value"`
}

// QueuePoint is the request queue at one instant.
type QueuePoint struct {
	T       float64 `json:"t"`
	Running float64 `json:"running"`
	Waiting float64 `json:"waiting"`
	Total   float64 `json:"total"`
}

// EngineSeries is the KV-cache usage of one logical engine.
type EngineSeries struct {
	EngineLabel string  `json:"engineLabel"`
	Points      []Point `json:"points"`
}

// ChartSeries is the chart series payload, version 20 (the dashboard's
// ChartSeries). MetricSources, the series of each source (worker) of a
// disaggregated point served by an orchestrator the dashboard knows
// (Dynamo, TensorRT-LLM), is empty for any other point.
type ChartSeries struct {
	Version              int                  `json:"version"`
	StartNs              float64              `json:"startNs"`
	EndNs                float64              `json:"endNs"`
	DurationS            float64              `json:"durationS"`
	TimeslicesCount      int                  `json:"timeslicesCount"`
	KVCacheUsage         []Point              `json:"kvCacheUsage"`
	PrefixCacheHitRate   []Point              `json:"prefixCacheHitRate"`
	QueueDepth           []QueuePoint         `json:"queueDepth"`
	PromptTokensBySource map[string][]Point   `json:"promptTokensBySource"`
	PrefillTps           []Point              `json:"prefillTps"`
	DecodeTps            []Point              `json:"decodeTps"`
	PrefixCacheHitsTps   []Point              `json:"prefixCacheHitsTps"`
	HostKVCacheUsage     []Point              `json:"hostKvCacheUsage"`
	KVCacheUsageByEngine []EngineSeries       `json:"kvCacheUsageByEngine"`
	MetricSources        []MetricSourceSeries `json:"metricSources"`
}

// build assembles the chart series over both blocks, with the series of
// each source when the point has them.
func (c *chartCollector) build() *ChartSeries {
	c.normalize()
	var keep func(string) bool
	if c.streamed {
		keep = func(n string) bool { return chartKeys[n] }
	}
	m := c.merged(bothPhases, keep)
	start, end, count := math.Inf(1), 0.0, 0
	for _, n := range m.names {
		for _, s := range m.series[n] {
			if s.slices == 0 {
				continue
			}
			count = max(count, s.slices)
			if s.first.set && s.first.v < start {
				start = s.first.v
			}
			if s.last.set && s.last.v > end {
				end = s.last.v
			}
		}
	}
	if !schema.Finite(start) {
		start = 0
	}
	cs := seriesFrom(m, c.point, start)
	cs.StartNs, cs.EndNs, cs.TimeslicesCount = start, end, count
	if end > start {
		cs.DurationS = (end - start) / 1e9
	}
	if c.point.PerSource() {
		cs.MetricSources = metricSources(m, c.point, start)
	}
	return cs
}
