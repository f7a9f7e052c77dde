package trace

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// ChartSeriesVersion is the version of the chart series payload
// (agentic_trace_replay.chart_series) whose shape and values this package
// writes: the dashboard reads a stored payload only at exactly this version
// and recomputes any other from the server metrics blob.
const ChartSeriesVersion = 12

// inMemoryExportLimit is the size of server_metrics_export.json up to which
// the dashboard parses the whole document; a larger one it streams, keeping
// only the metrics it charts. The two differ in what they see: the whole
// document times the series over every metric and falls back to the SGLang
// and vllm:prompt_tokens names for the aggregate statistics; the streamed
// one times them over the charted metrics and reads the statistics from the
// vLLM cache metrics only. Both are reproduced, chosen by the file's size.
const inMemoryExportLimit = 128 << 20

// Metric names the charts read (chartKeys) and those the aggregate
// statistics read on a streamed export (aggregateKeys).
var (
	chartKeys = setOf("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits",
		"vllm:prefix_cache_queries", "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:prompt_tokens",
		"vllm:generation_tokens", "vllm:prompt_tokens_by_source", "sglang:token_usage", "sglang:cached_tokens",
		"sglang:prompt_tokens", "sglang:generation_tokens", "sglang:num_running_reqs", "sglang:num_queue_reqs",
		"sglang:realtime_tokens", "sglang:hicache_host_used_tokens", "sglang:hicache_host_total_tokens")
	aggregateKeys = setOf("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits",
		"vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_hits", "vllm:gpu_prefix_cache_queries")
	kvNames = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"}
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

type sliceIn struct {
	StartNs bare `json:"start_ns"`
	EndNs   bare `json:"end_ns"`
	Avg     bare `json:"avg"`
	Rate    bare `json:"rate"`
}

type seriesIn struct {
	EndpointURL *string         `json:"endpoint_url"`
	Labels      json.RawMessage `json:"labels"`
	Timeslices  []sliceIn       `json:"timeslices"`
}

type metricIn struct {
	Series []json.RawMessage `json:"series"`
}

// acc sums one field of the timeslices starting at one instant.
type acc struct {
	sum float64
	n   int
}

type byStart map[float64]acc

func (m byStart) add(t, v float64) {
	a := m[t]
	a.sum += v
	a.n++
	m[t] = a
}

// metricAcc is one metric's timeslices summed by start, per phase.
type metricAcc struct {
	series [2]int
	avg    [2]byStart
	rate   [2]byStart
}

// span times the series: their longest length, the earliest first start and
// the latest last end.
type span struct {
	count      int
	start, end float64
}

func (s *span) add(ts []sliceIn) {
	if len(ts) == 0 {
		return
	}
	s.count = max(s.count, len(ts))
	if f := ts[0].StartNs; f.set && f.v < s.start {
		s.start = f.v
	}
	if l := ts[len(ts)-1].EndNs; l.set && l.v > s.end {
		s.end = l.v
	}
}

// kvSeries is one series of a KV-cache usage metric, kept for the
// per-engine lines.
type kvSeries struct {
	phase, index int
	label        string
	labeled      bool
	points       [][2]float64 // start ns, avg
}

// bucket sums the rates of the prompt-token series of one source label.
type bucket struct {
	label string
	rates byStart
}

// chartCollector gathers, while the export streams by, what the chart
// series and the server-side statistics need: per metric the timeslice
// fields summed by start, the KV-cache usage series one by one, the
// prompt-token sources, the time span and, for a point whose series the
// dashboard groups by source, one such collector per source. Nothing else
// is kept.
type chartCollector struct {
	metrics       map[string]*metricAcc
	kv            map[string][]*kvSeries
	vllmSources   []*bucket
	sglangSources []*bucket
	all, charted  span
	// perSource: the series are also grouped by source (PointContext).
	perSource bool
	// streamedExport: the dashboard would stream the export, seeing the
	// charted metrics only.
	streamedExport bool
	sources        []*sourceGroup
	sourceIdx      map[string]*sourceGroup
}

func newChartCollector(ctx PointContext, streamed bool) *chartCollector {
	return &chartCollector{metrics: map[string]*metricAcc{}, kv: map[string][]*kvSeries{},
		all: span{start: math.Inf(1)}, charted: span{start: math.Inf(1)},
		perSource: ctx.PerSource(), streamedExport: streamed, sourceIdx: map[string]*sourceGroup{}}
}

// streamed reports whether the dashboard would stream the export rather
// than parse it whole.
func (m *ServerMetrics) streamed() bool { return m.exportSize > inMemoryExportLimit }

// wanted reports whether the series of a metric are read beyond their span.
func wanted(name string) bool { return chartKeys[name] || aggregateKeys[name] }

// metric takes every series of one metric decoded whole.
func (c *chartCollector) metric(phase int, name string, raw json.RawMessage) error {
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
	var s seriesIn
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	c.all.add(s.Timeslices)
	if chartKeys[name] {
		c.charted.add(s.Timeslices)
	}
	var labels map[string]string
	parsed := false
	// Every series the dashboard sees belongs to a source: of every
	// metric when it parses the export whole, of the charted ones when it
	// streams it. Only the charted ones feed the source's series.
	if c.perSource && (!c.streamedExport || chartKeys[name]) {
		var err error
		if labels, err = parseLabels(s.Labels); err != nil {
			return err
		}
		parsed = true
		g := c.sourceOf(s.EndpointURL, labels)
		if chartKeys[name] {
			if err := g.chart.series(phase, name, raw); err != nil {
				return err
			}
		}
	}
	if !wanted(name) {
		return nil
	}
	m := c.metrics[name]
	if m == nil {
		m = &metricAcc{}
		c.metrics[name] = m
	}
	index := m.series[phase]
	m.series[phase]++
	if m.avg[phase] == nil {
		m.avg[phase], m.rate[phase] = byStart{}, byStart{}
	}
	for _, ts := range s.Timeslices {
		if !ts.StartNs.set {
			continue
		}
		if ts.Avg.set && finite(ts.Avg.v) {
			m.avg[phase].add(ts.StartNs.v, ts.Avg.v)
		}
		if ts.Rate.set && finite(ts.Rate.v) {
			m.rate[phase].add(ts.StartNs.v, ts.Rate.v)
		}
	}
	if !parsed {
		var err error
		if labels, err = parseLabels(s.Labels); err != nil {
			return err
		}
	}
	if slices.Contains(kvNames, name) {
		k := &kvSeries{phase: phase, index: index}
		for _, key := range []string{"engine", "engine_idx", "dp_rank"} {
			if v, ok := labels[key]; ok {
				k.label, k.labeled = v, true
				break
			}
		}
		for _, ts := range s.Timeslices {
			if ts.StartNs.set && ts.Avg.set && finite(ts.Avg.v) {
				k.points = append(k.points, [2]float64{ts.StartNs.v, ts.Avg.v})
			}
		}
		c.kv[name] = append(c.kv[name], k)
	}
	switch name {
	case "vllm:prompt_tokens_by_source":
		label, ok := firstLabel(labels, "source", "reason", "kind")
		if !ok {
			label = stringifyLabels(s.Labels)
		}
		c.vllmSources = addRates(c.vllmSources, label, s.Timeslices)
	case "sglang:realtime_tokens":
		mode, ok := labels["mode"]
		if ok && mode == "prefill_compute" {
			c.sglangSources = addRates(c.sglangSources, "compute (miss)", s.Timeslices)
		}
	case "sglang:cached_tokens":
		src, ok := labels["cache_source"]
		if !ok {
			src = "cache hit"
		}
		var label string
		switch src {
		case "device":
			label = "cache hit (HBM)"
		case "host":
			label = "cache hit (CPU offload)"
		case "total":
			label = "cache hit"
		default:
			label = "cache hit (" + src + ")"
		}
		c.sglangSources = addRates(c.sglangSources, label, s.Timeslices)
	}
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

func firstLabel(labels map[string]string, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			return v, true
		}
	}
	return "", false
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

// addRates adds a series' rates to the bucket of its label; the bucket
// exists from the first series that names it, even one without rates.
func addRates(bs []*bucket, label string, ts []sliceIn) []*bucket {
	var b *bucket
	for _, x := range bs {
		if x.label == label {
			b = x
		}
	}
	if b == nil {
		b = &bucket{label: label, rates: byStart{}}
		bs = append(bs, b)
	}
	for _, s := range ts {
		if s.Rate.set && s.StartNs.set {
			b.rates.add(s.StartNs.v, s.Rate.v)
		}
	}
	return bs
}

// pick is the first of names with a series in the given phases.
func (c *chartCollector) pick(phases []int, names ...string) *metricAcc {
	for _, n := range names {
		if m := c.metrics[n]; m != nil {
			for _, ph := range phases {
				if m.series[ph] > 0 {
					return m
				}
			}
		}
	}
	return nil
}

var bothPhases, profilingOnly = []int{phaseProfiling, phaseWarmup}, []int{phaseProfiling}

// merged is one field of a metric over the given phases, summed by start;
// with avg set, the sum is divided by the count (the mean over series).
func merged(m *metricAcc, rate, avg bool, phases []int) map[float64]float64 {
	out := map[float64]float64{}
	if m == nil {
		return out
	}
	sums := byStart{}
	for _, ph := range phases {
		src := m.avg[ph]
		if rate {
			src = m.rate[ph]
		}
		for t, a := range src {
			s := sums[t]
			s.sum += a.sum
			s.n += a.n
			sums[t] = s
		}
	}
	for t, a := range sums {
		if avg {
			out[t] = a.sum / float64(a.n)
		} else {
			out[t] = a.sum
		}
	}
	return out
}

func sortedKeys[V any](m map[float64]V) []float64 {
	keys := make([]float64, 0, len(m))
	for t := range m {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	return keys
}

// serverSamples are the per-timeslice KV-cache utilization (mean over
// series) and prefix-cache hit rate (Σ hits / Σ queries) of the profiling
// block, the samples of the aggregate statistics.
func (c *chartCollector) serverSamples(streamed bool) (kv, hit []float64) {
	names := func(ns ...string) []string {
		if !streamed {
			return ns
		}
		var out []string
		for _, n := range ns {
			if aggregateKeys[n] {
				out = append(out, n)
			}
		}
		return out
	}
	kvm := merged(c.pick(profilingOnly, names(kvNames...)...), false, true, profilingOnly)
	for _, t := range sortedKeys(kvm) {
		kv = append(kv, kvm[t])
	}
	hits := merged(c.pick(profilingOnly, names("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits", "sglang:cached_tokens")...),
		true, false, profilingOnly)
	qs := merged(c.pick(profilingOnly, names("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries", "vllm:prompt_tokens",
		"sglang:prompt_tokens")...), true, false, profilingOnly)
	for _, t := range sortedKeys(hits) {
		if q, ok := qs[t]; ok && q > 0 {
			hit = append(hit, hits[t]/q)
		}
	}
	return kv, hit
}

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

// EngineSeries is the KV-cache usage of one engine.
type EngineSeries struct {
	EngineLabel string  `json:"engineLabel"`
	Points      []Point `json:"points"`
}

// ChartSeries is the chart series payload, version 12 (the dashboard's
// ChartSeries). MetricSources, the series of each source (worker) of a
// disaggregated Dynamo point, is empty for any other point.
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

// build assembles the chart series over both phases, with the series of
// each source when the point has them.
func (c *chartCollector) build(streamed bool) *ChartSeries {
	sp := c.all
	if streamed {
		sp = c.charted
	}
	start := sp.start
	if !finite(start) {
		start = 0
	}
	cs := c.buildFrom(start)
	cs.StartNs, cs.EndNs, cs.TimeslicesCount = start, sp.end, sp.count
	if sp.end > start {
		cs.DurationS = (sp.end - start) / 1e9
	}
	if c.perSource {
		cs.MetricSources = c.metricSources(start)
	}
	return cs
}

// buildFrom assembles the series, timed in seconds from origin (ns).
func (c *chartCollector) buildFrom(origin float64) *ChartSeries {
	tOf := func(ns float64) float64 { return (ns - origin) / 1e9 }
	cs := &ChartSeries{Version: ChartSeriesVersion, PromptTokensBySource: map[string][]Point{},
		KVCacheUsageByEngine: []EngineSeries{}, MetricSources: []MetricSourceSeries{}}
	points := func(m map[float64]float64) []Point {
		out := make([]Point, 0, len(m))
		for _, t := range sortedKeys(m) {
			out = append(out, Point{T: tOf(t), Value: m[t]})
		}
		return out
	}
	cs.KVCacheUsage = points(merged(c.pick(bothPhases, kvNames...), false, true, bothPhases))
	cs.KVCacheUsageByEngine = c.engines(tOf)

	hits := merged(c.pick(bothPhases, "vllm:prefix_cache_hits", "sglang:cached_tokens"), true, false, bothPhases)
	qs := merged(c.pick(bothPhases, "vllm:prefix_cache_queries", "vllm:prompt_tokens", "sglang:prompt_tokens"), true, false, bothPhases)
	cs.PrefixCacheHitRate = []Point{}
	for _, t := range sortedKeys(hits) {
		if q, ok := qs[t]; ok && q > 0 {
			cs.PrefixCacheHitRate = append(cs.PrefixCacheHitRate, Point{T: tOf(t), Value: hits[t] / q})
		}
	}

	run := merged(c.pick(bothPhases, "vllm:num_requests_running", "sglang:num_running_reqs"), false, false, bothPhases)
	wait := merged(c.pick(bothPhases, "vllm:num_requests_waiting", "sglang:num_queue_reqs"), false, false, bothPhases)
	union := map[float64]struct{}{}
	for t := range run {
		union[t] = struct{}{}
	}
	for t := range wait {
		union[t] = struct{}{}
	}
	cs.QueueDepth = make([]QueuePoint, 0, len(union))
	for _, t := range sortedKeys(union) {
		r, w := run[t], wait[t]
		cs.QueueDepth = append(cs.QueueDepth, QueuePoint{T: tOf(t), Running: r, Waiting: w, Total: r + w})
	}

	cs.PrefillTps = points(merged(c.pick(bothPhases, "vllm:prompt_tokens", "sglang:prompt_tokens"), true, false, bothPhases))
	cs.DecodeTps = points(merged(c.pick(bothPhases, "vllm:generation_tokens", "sglang:generation_tokens"), true, false, bothPhases))
	cs.PrefixCacheHitsTps = points(merged(c.pick(bothPhases, "vllm:prefix_cache_hits", "sglang:cached_tokens"), true, false, bothPhases))

	used := merged(c.metrics["sglang:hicache_host_used_tokens"], false, false, bothPhases)
	total := merged(c.metrics["sglang:hicache_host_total_tokens"], false, false, bothPhases)
	cs.HostKVCacheUsage = []Point{}
	for _, t := range sortedKeys(used) {
		if tot, ok := total[t]; ok && tot > 0 {
			cs.HostKVCacheUsage = append(cs.HostKVCacheUsage, Point{T: tOf(t), Value: used[t] / tot})
		}
	}

	sources := c.vllmSources
	if len(sources) == 0 {
		sources = c.sglangSources
	}
	for _, b := range sources {
		var arr []Point
		for _, t := range sortedKeys(b.rates) {
			if v := b.rates[t].sum; v > 0 {
				arr = append(arr, Point{T: tOf(t), Value: v})
			}
		}
		if len(arr) > 0 {
			cs.PromptTokensBySource[b.label] = arr
		}
	}
	return cs
}

// engines are the per-engine KV-cache usage lines of the picked KV metric,
// when it has more than one series: profiling series first, then warmup,
// ordered by their numeric engine label (else their index), stably.
func (c *chartCollector) engines(tOf func(float64) float64) []EngineSeries {
	var name string
	for _, n := range kvNames {
		if m := c.metrics[n]; m != nil && m.series[phaseProfiling]+m.series[phaseWarmup] > 0 {
			name = n
			break
		}
	}
	out := []EngineSeries{}
	ss := c.kv[name]
	if len(ss) <= 1 {
		return out
	}
	prof := c.metrics[name].series[phaseProfiling]
	type decorated struct {
		s     *kvSeries
		label string
		key   float64
	}
	ds := make([]decorated, len(ss))
	for i, s := range ss {
		idx := s.index
		if s.phase == phaseWarmup {
			idx += prof
		}
		d := decorated{s: s, label: strconv.Itoa(idx), key: float64(idx)}
		if s.labeled {
			d.label = s.label
			d.key = float64(idx)
			if v := jsNumber(s.label); finite(v) {
				d.key = v
			}
		}
		ds[i] = d
	}
	// Merged order: every profiling series, then every warmup series.
	sort.SliceStable(ds, func(i, j int) bool {
		ki, kj := ds[i].s.phase*len(ss)+ds[i].s.index, ds[j].s.phase*len(ss)+ds[j].s.index
		return ki < kj
	})
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].key < ds[j].key })
	for _, d := range ds {
		if len(d.s.points) == 0 {
			continue
		}
		pts := make([]Point, len(d.s.points))
		for i, p := range d.s.points {
			pts[i] = Point{T: tOf(p[0]), Value: p[1]}
		}
		out = append(out, EngineSeries{EngineLabel: d.label, Points: pts})
	}
	return out
}

var decimalLiteral = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// jsNumber converts a label the way JavaScript's Number() does for the
// forms labels take: blank is 0, a decimal literal its value, a 0x/0o/0b
// integer its value, anything else NaN.
func jsNumber(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if decimalLiteral.MatchString(s) {
		v, _ := strconv.ParseFloat(s, 64) // out of range: ±Inf, as JavaScript
		return v
	}
	for prefix, base := range map[string]int{"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2} {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			if v, err := strconv.ParseUint(rest, base, 64); err == nil {
				return float64(v)
			}
			return math.NaN()
		}
	}
	if s == "Infinity" || s == "+Infinity" {
		return math.Inf(1)
	}
	if s == "-Infinity" {
		return math.Inf(-1)
	}
	return math.NaN()
}
