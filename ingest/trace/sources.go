package trace

import (
	"slices"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/inferencex/ingest/ingest/ptr"
)

// PointContext is what the chart series of a trace depend on beyond its
// files: the framework and disagg flag of the point's config. They choose
// the server-metrics adapter (TensorRT-LLM for a framework naming trt,
// Dynamo for dynamo-*, llm-d for llmd-vllm, else generic); the dashboard
// keeps per-source series (metricSources) only for a disaggregated point
// whose adapter is not the generic one.
type PointContext struct {
	Framework string
	Disagg    bool
}

// Server-metrics adapters, as the dashboard selects them.
const (
	adapterTRTLLM  = "trtllm"
	adapterDynamo  = "dynamo"
	adapterLLMD    = "llmd"
	adapterGeneric = "generic"
)

func (c PointContext) adapter() string {
	switch {
	case strings.Contains(strings.ToLower(c.Framework), "trt"):
		return adapterTRTLLM
	case strings.HasPrefix(c.Framework, "dynamo-"):
		return adapterDynamo
	case c.Framework == "llmd-vllm":
		return adapterLLMD
	}
	return adapterGeneric
}

// PerSource reports whether the chart series group the export's series by
// source.
func (c PointContext) PerSource() bool {
	return c.Disagg && c.adapter() != adapterGeneric
}

// ChartWithheld reports a point whose chart series the ingest does not
// store: a disaggregated llm-d point, whose endpoints' roles the
// dashboard's ingest takes from an input this ingest does not have. Its
// chart_series stays null, which the dashboard computes on read.
func (c PointContext) ChartWithheld() bool {
	return c.Disagg && c.adapter() == adapterLLMD
}

// MetricSource identifies the server (worker) one series of the export came
// from, as the point's adapter reads its labels. DPRank and Engine are
// always null: a source spans every rank of its worker.
type MetricSource struct {
	ID          string  `json:"id"`
	Adapter     string  `json:"adapter"`
	Role        string  `json:"role"`
	EndpointURL *string `json:"endpointUrl"`
	NativeRole  *string `json:"nativeRole"`
	WorkerID    *string `json:"workerId"`
	DPRank      *string `json:"dpRank"`
	Engine      *string `json:"engine"`
}

// MetricSourceSeries is the chart series of one source, over that
// source's series only, timed from the whole export's start.
type MetricSourceSeries struct {
	Source               MetricSource       `json:"source"`
	KVCacheUsage         []Point            `json:"kvCacheUsage"`
	PrefixCacheHitRate   []Point            `json:"prefixCacheHitRate"`
	QueueDepth           []QueuePoint       `json:"queueDepth"`
	PromptTokensBySource map[string][]Point `json:"promptTokensBySource"`
	PromptTps            []Point            `json:"promptTps"`
	GenerationTps        []Point            `json:"generationTps"`
	PrefixCacheHitsTps   []Point            `json:"prefixCacheHitsTps"`
	HostKVCacheUsage     []Point            `json:"hostKvCacheUsage"`
	KVCacheUsageByEngine []EngineSeries     `json:"kvCacheUsageByEngine"`
}

func label(labels map[string]string, keys ...string) *string {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			return &v
		}
	}
	return nil
}

// nativeRoles map each adapter's role labels to the dashboard's roles:
// Dynamo's dynamo_component (backend is decode, frontend or router is the
// router), TensorRT-LLM's disaggregation_mode (else dynamo_component;
// aggregated is combined), llm-d's engine_type (else llm-d.ai/role). Any
// other value, or none, is unknown.
var nativeRoles = map[string]map[string]string{
	adapterDynamo: {"prefill": "prefill", "backend": "decode", "frontend": "router", "router": "router"},
	adapterTRTLLM: {"prefill": "prefill", "decode": "decode", "backend": "decode", "aggregated": "combined"},
	adapterLLMD:   {"prefill": "prefill", "decode": "decode", "combined": "combined"},
}

// identifySource is the source of a series under an adapter. A source is
// one worker: Dynamo names it by role and worker (else endpoint, the
// series' own or the dynamo_endpoint label), TensorRT-LLM by role and
// endpoint (else worker), llm-d by endpoint (which is also its worker). An
// id joins its parts with "|", an absent one as "".
func identifySource(adapter string, endpoint *string, labels map[string]string) MetricSource {
	s := MetricSource{Adapter: adapter, Role: "unknown", EndpointURL: endpoint}
	var idPart *string
	switch adapter {
	case adapterDynamo:
		s.NativeRole = label(labels, "dynamo_component")
		if s.EndpointURL == nil {
			s.EndpointURL = label(labels, "dynamo_endpoint")
		}
		s.WorkerID = label(labels, "worker_id")
		idPart = s.WorkerID
		if idPart == nil {
			idPart = s.EndpointURL
		}
	case adapterTRTLLM:
		s.NativeRole = label(labels, "disaggregation_mode", "dynamo_component")
		s.WorkerID = label(labels, "worker_id")
		idPart = s.EndpointURL
		if idPart == nil {
			idPart = s.WorkerID
		}
	case adapterLLMD:
		s.NativeRole = label(labels, "engine_type", "llm-d.ai/role")
		s.WorkerID = endpoint
	}
	if s.NativeRole != nil {
		if r, ok := nativeRoles[adapter][*s.NativeRole]; ok {
			s.Role = r
		}
	}
	if adapter == adapterLLMD {
		s.ID = adapter + "|" + ptr.Deref(endpoint)
	} else {
		s.ID = adapter + "|" + s.Role + "|" + ptr.Deref(idPart)
	}
	return s
}

var roleOrder = map[string]int{"router": 0, "prefill": 1, "decode": 2, "combined": 3, "unknown": 4}

// metricSources are the per-source chart series of a metric map. Each
// endpoint's role (its series' disaggregation_mode, else dynamo_component
// label; the last in map order wins) is lent to its series that lack a
// disaggregation_mode; series are grouped by their source's id (the
// source as its first series names it), each group charted over its own
// series and timed from origin. Sources are ordered by role (router,
// prefill, decode, combined, unknown), then endpoint and id as JavaScript's
// localeCompare orders them (the root collation).
func metricSources(m *metricsMap, pc PointContext, origin float64) []MetricSourceSeries {
	adapter := pc.adapter()
	roles := map[string]string{}
	for _, n := range m.names {
		for _, s := range m.series[n] {
			r := label(s.labels, "disaggregation_mode", "dynamo_component")
			if s.endpoint != nil && *s.endpoint != "" && r != nil && *r != "" {
				roles[*s.endpoint] = *r
			}
		}
	}
	type group struct {
		source  MetricSource
		metrics *metricsMap
	}
	var groups []*group
	byID := map[string]*group{}
	for _, n := range m.names {
		for _, s := range m.series[n] {
			labels := s.labels
			if s.endpoint != nil {
				if hint, ok := roles[*s.endpoint]; ok && labels["disaggregation_mode"] == "" {
					labels = labelsWith(s.labels, [2]string{"disaggregation_mode", hint})
				}
			}
			src := identifySource(adapter, s.endpoint, labels)
			g := byID[src.ID]
			if g == nil {
				g = &group{source: src, metrics: &metricsMap{series: map[string][]*rawSeries{}}}
				byID[src.ID] = g
				groups = append(groups, g)
			}
			if !g.metrics.has(n) {
				g.metrics.names = append(g.metrics.names, n)
			}
			g.metrics.series[n] = append(g.metrics.series[n], s)
		}
	}
	out := make([]MetricSourceSeries, 0, len(groups))
	for _, g := range groups {
		cs := seriesFrom(g.metrics, pc, origin)
		out = append(out, MetricSourceSeries{Source: g.source, KVCacheUsage: cs.KVCacheUsage,
			PrefixCacheHitRate: cs.PrefixCacheHitRate, QueueDepth: cs.QueueDepth, PromptTokensBySource: cs.PromptTokensBySource,
			PromptTps: cs.PrefillTps, GenerationTps: cs.DecodeTps, PrefixCacheHitsTps: cs.PrefixCacheHitsTps,
			HostKVCacheUsage: cs.HostKVCacheUsage, KVCacheUsageByEngine: cs.KVCacheUsageByEngine})
	}
	col := collate.New(language.Und)
	slices.SortStableFunc(out, func(a, b MetricSourceSeries) int {
		if d := roleOrder[a.Source.Role] - roleOrder[b.Source.Role]; d != 0 {
			return d
		}
		if d := col.CompareString(ptr.Deref(a.Source.EndpointURL), ptr.Deref(b.Source.EndpointURL)); d != 0 {
			return d
		}
		return col.CompareString(a.Source.ID, b.Source.ID)
	})
	return out
}
