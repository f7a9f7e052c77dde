package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
	"github.com/inferencex/ingest/schema"
)

// maxSlices bounds the per-second series (one week of 1-s timeslices): a
// bogus timestamp never turns into a huge allocation.
const maxSlices = 7 * 24 * 3600

// Metric roles in the server metrics export: the vLLM and SGLang metric
// names that stand for each role.
var metricRoles = map[string]string{
	"vllm:kv_cache_usage_perc":     "kvUsage",
	"vllm:gpu_cache_usage_perc":    "kvUsage",
	"sglang:token_usage":           "kvUsage",
	"vllm:num_requests_running":    "running",
	"sglang:num_running_reqs":      "running",
	"vllm:num_requests_waiting":    "waiting",
	"sglang:num_queue_reqs":        "waiting",
	"vllm:prompt_tokens":           "prompt",
	"sglang:prompt_tokens":         "prompt",
	"vllm:generation_tokens":       "generation",
	"sglang:generation_tokens":     "generation",
	"vllm:prefix_cache_hits":       "prefixHits",
	"vllm:prompt_tokens_by_source": "bySource",
	"sglang:cached_tokens":         "bySource",
	"sglang:max_total_num_tokens":  "capacity",
}

// Prompt token sources that count as cache hits in GPU memory, and those
// served from CPU offload or an external KV store.
var (
	hbmSources = []string{"cache hit (HBM)", "cache hit", "local_cache_hit"}
	cpuSources = []string{"cache hit (CPU offload)", "external_kv_transfer"}
)

type timeslice struct {
	StartNs int64    `json:"start_ns"`
	EndNs   int64    `json:"end_ns"`
	Total   *float64 `json:"total"`
	Rate    *float64 `json:"rate"`
	Avg     *float64 `json:"avg"`
	Value   *float64 `json:"value"`
}

type series struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels"`
	Timeslices  []timeslice       `json:"timeslices"`
}

type metric struct {
	Type   string   `json:"type"`
	Series []series `json:"series"`
}

// counterValue is the increase within a slice; gaugeValue its level.
func (t timeslice) counterValue() (float64, bool) {
	if t.Total != nil && schema.Finite(*t.Total) {
		return *t.Total, true
	}
	if t.Rate != nil && schema.Finite(*t.Rate) && t.EndNs > t.StartNs {
		return *t.Rate * float64(t.EndNs-t.StartNs) / 1e9, true
	}
	return 0, false
}

func (t timeslice) gaugeValue() (float64, bool) {
	if t.Avg != nil && schema.Finite(*t.Avg) {
		return *t.Avg, true
	}
	if t.Value != nil && schema.Finite(*t.Value) {
		return *t.Value, true
	}
	return 0, false
}

// ServerMetrics is what the export yields: per-second series summed over
// every endpoint and rank, and the KV-cache capacity.
type ServerMetrics struct {
	Adapter     string
	MetricCount int
	slices      int
	kvUsage     []float64 // mean over series
	kvUsageN    []int
	running     []float64
	waiting     []float64
	prompt      []float64
	generation  []float64
	prefixHits  []float64
	bySource    map[string][]float64
	capacity    *capacity
	hasPrompt   bool
	// chart gathers the chart series and the server-side statistics over
	// both blocks of the export.
	chart *chartCollector
	// exportSize is the size of the export in bytes.
	exportSize int64
}

func (m *ServerMetrics) grow(n int) {
	if n <= m.slices {
		return
	}
	ext := func(s []float64) []float64 { return append(s, make([]float64, n-len(s))...) }
	m.kvUsage, m.running, m.waiting = ext(m.kvUsage), ext(m.running), ext(m.waiting)
	m.prompt, m.generation, m.prefixHits = ext(m.prompt), ext(m.generation), ext(m.prefixHits)
	m.kvUsageN = append(m.kvUsageN, make([]int, n-len(m.kvUsageN))...)
	for k, s := range m.bySource {
		m.bySource[k] = ext(s)
	}
	m.slices = n
}

// ReadServerMetrics streams server_metrics_export.json. The per-second
// series and cache figures of the benchmark metrics read the "metrics" map
// only, one metric decoded at a time; the chart series and statistics
// payloads read it and "warmup_metrics" one series at a time.
//
// size is the export's size in bytes, which decides how the dashboard would
// have parsed it (see inMemoryExportLimit); 0 reads it as a small one. pc
// is the point's context, which decides whether the chart series group the
// series by source.
func ReadServerMetrics(r io.Reader, size int64, pc PointContext) (*ServerMetrics, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	m := &ServerMetrics{bySource: map[string][]float64{}, exportSize: size}
	m.chart = newChartCollector(pc, m.streamed())
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	found := false
	seen := map[string]bool{}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, &strictjson.Error{Kind: strictjson.DuplicateKey, Field: key}
		}
		seen[key] = true
		phase := phaseProfiling
		switch key {
		case "metrics":
			found = true
		case "warmup_metrics":
			phase = phaseWarmup
		case "input_config":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			m.chart.input = readInputConfig(raw)
			continue
		default:
			if err := skipValue(dec); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			continue
		}
		if err := m.readMetrics(dec, phase); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("end of export: %w", err)
	}
	if !found {
		return nil, errors.New(`no "metrics" object`)
	}
	return m, nil
}

func (m *ServerMetrics) readMetrics(dec *json.Decoder, phase int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("expected an object, found %v", tok)
	}
	var names []string
	seen := map[string]bool{}
	var chk strictjson.Checker
	for dec.More() {
		name, err := objectKey(dec)
		if err != nil {
			return err
		}
		if seen[name] {
			return &strictjson.Error{Kind: strictjson.DuplicateKey, Field: name}
		}
		seen[name] = true
		role, ok := metricRoles[name]
		if (phase == phaseWarmup || !ok) && m.streamed() && !wanted(name) {
			// A streamed export is read for the charted and aggregated
			// metrics only.
			if err := skipValue(dec); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if phase == phaseProfiling {
				m.MetricCount++
				names = append(names, name)
			}
			continue
		}
		if phase == phaseWarmup || !ok {
			m.chart.sawMetric(phase, name)
			err := walkSeries(dec, func(raw json.RawMessage) error {
				if err := chk.Check(raw); err != nil {
					return err
				}
				return m.chart.series(phase, name, raw)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if phase == phaseProfiling {
				m.MetricCount++
				names = append(names, name)
			}
			continue
		}
		m.MetricCount++
		names = append(names, name)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := chk.Check(raw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var mt metric
		if err := json.Unmarshal(raw, &mt); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		m.add(name, role, mt)
		if err := m.chart.metric(phase, name, raw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	_, err = dec.Token()
	if phase == phaseProfiling {
		m.Adapter = adapterOf(names)
	}
	return err
}

// walkSeries reads one metric and hands each element of its "series" array
// to fn, one at a time; other members are skipped. A metric that is not an
// object, or has no or a null series, has none.
func walkSeries(dec *json.Decoder, fn func(json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if d == '[' {
		return skipRest(dec)
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		if seen[key] {
			return &strictjson.Error{Kind: strictjson.DuplicateKey, Field: key}
		}
		seen[key] = true
		if key != "series" {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if tok == nil {
			continue
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return fmt.Errorf("series: expected an array, found %v", tok)
		}
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if err := fn(raw); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// skipRest skips what is left of an array or object whose opening
// delimiter was read.
func skipRest(dec *json.Decoder) error {
	for dec.More() {
		var discard json.RawMessage
		if err := dec.Decode(&discard); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

func (m *ServerMetrics) add(name, role string, mt metric) {
	if role == "capacity" {
		m.capacity = newCapacity(mt.Series)
		return
	}
	for _, s := range mt.Series {
		for _, t := range s.Timeslices {
			i := int(t.StartNs / 1e9)
			if t.StartNs < 0 || i >= maxSlices {
				continue
			}
			m.grow(i + 1)
			switch role {
			case "kvUsage":
				if v, ok := t.gaugeValue(); ok {
					if v > 1.5 {
						v /= 100 // exported as a percentage
					}
					m.kvUsage[i] += v
					m.kvUsageN[i]++
				}
			case "running", "waiting":
				if v, ok := t.gaugeValue(); ok {
					if role == "running" {
						m.running[i] += v
					} else {
						m.waiting[i] += v
					}
				}
			case "prompt", "generation", "prefixHits":
				if v, ok := t.counterValue(); ok {
					switch role {
					case "prompt":
						m.prompt[i] += v
						m.hasPrompt = true
					case "generation":
						m.generation[i] += v
					default:
						m.prefixHits[i] += v
					}
				}
			case "bySource":
				src := sourceLabel(name, s.Labels)
				if src == "" {
					continue
				}
				if v, ok := t.counterValue(); ok {
					arr := m.bySource[src]
					if len(arr) < m.slices {
						arr = append(arr, make([]float64, m.slices-len(arr))...)
					}
					arr[i] += v
					m.bySource[src] = arr
				}
			}
		}
	}
}

// sourceLabel names a prompt-token source the way the charts do.
func sourceLabel(name string, labels map[string]string) string {
	if strings.HasPrefix(name, "sglang:") {
		switch labels["cache_source"] {
		case "device":
			return "cache hit (HBM)"
		case "host":
			return "cache hit (CPU offload)"
		case "":
			return ""
		default:
			return labels["cache_source"]
		}
	}
	return labels["source"]
}

func adapterOf(names []string) string {
	counts := map[string]int{}
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "vllm:"):
			counts["vllm"]++
		case strings.HasPrefix(n, "sglang:"):
			counts["sglang"]++
		case strings.HasPrefix(n, "dynamo_"):
			counts["dynamo"]++
		case strings.HasPrefix(n, "atom:"), strings.HasPrefix(n, "atom_"):
			counts["atom"]++
		case strings.HasPrefix(n, "trtllm"):
			counts["trtllm"]++
		}
	}
	best, n := "none", 0
	for _, k := range []string{"vllm", "sglang", "dynamo", "atom", "trtllm"} {
		if counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best
}

// CacheHitRates are the server-side hit rates over the whole run: HBM hits
// (by source, else prefix-cache hits) and CPU-offload/external hits, each
// over the prompt tokens. ok is false when the export has no prompt tokens.
func (m *ServerMetrics) CacheHitRates() (gpu float64, cpu *float64, ok bool) {
	var prompt float64
	for _, v := range m.prompt {
		prompt += v
	}
	if prompt <= 0 {
		return 0, nil, false
	}
	var hbm float64
	bySrc := false
	for _, s := range hbmSources {
		if arr, has := m.bySource[s]; has {
			bySrc = true
			for _, v := range arr {
				hbm += v
			}
		}
	}
	if !bySrc {
		for _, v := range m.prefixHits {
			hbm += v
		}
	}
	var off float64
	for _, s := range cpuSources {
		for _, v := range m.bySource[s] {
			off += v
		}
	}
	if off > 0 {
		c := round(off / prompt)
		cpu = &c
	}
	return round(hbm / prompt), cpu, true
}

// KVCapacity is the KV-cache pool in tokens from sglang:max_total_num_tokens,
// nil when absent, changing or conflicting.
func (m *ServerMetrics) KVCapacity() *int64 {
	if m.capacity == nil {
		return nil
	}
	return m.capacity.total()
}

// capacity groups max_total_num_tokens series per engine: replicas of one
// engine's shards (same endpoint and labels but tp/pp/moe_ep rank) count
// once; distinct DP ranks and endpoints add up.
type capacity struct {
	groups  map[string]float64
	invalid bool
}

func newCapacity(ss []series) *capacity {
	c := &capacity{groups: map[string]float64{}}
	for _, s := range ss {
		keys := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			if k == "tp_rank" || k == "pp_rank" || k == "moe_ep_rank" {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString(s.EndpointURL)
		for _, k := range keys {
			b.WriteString("|" + k + "=" + s.Labels[k])
		}
		g := b.String()
		for _, t := range s.Timeslices {
			v, ok := t.gaugeValue()
			if !ok {
				continue
			}
			if v <= 0 || v != float64(int64(v)) {
				c.invalid = true
				continue
			}
			if old, seen := c.groups[g]; seen && old != v {
				c.invalid = true // changing or conflicting
			}
			c.groups[g] = v
		}
	}
	return c
}

func (c *capacity) total() *int64 {
	if c.invalid || len(c.groups) == 0 {
		return nil
	}
	var sum int64
	for _, v := range c.groups {
		sum += int64(v)
	}
	return &sum
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("expected %q, found %v", d, tok)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	k, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected an object key, found %v", tok)
	}
	return k, nil
}

// skipValue skips one value. Objects and arrays are walked one member at a
// time, so a large skipped map is never buffered whole.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	for dec.More() {
		if d == '{' {
			if _, err := objectKey(dec); err != nil {
				return err
			}
		}
		var discard json.RawMessage
		if err := dec.Decode(&discard); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}
