package trace

import (
	"slices"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// PointContext is what the chart series of a trace depend on beyond its
// files: the framework and disagg flag of the point's config. The
// dashboard keeps per-source series (metricSources) only for a
// disaggregated point served by an orchestrator it knows (Dynamo: a
// framework named dynamo-*).
type PointContext struct {
	Framework string
	Disagg    bool
}

// PerSource reports whether the chart series group the export's series by
// source (the dashboard's Dynamo adapter, chart series version 12).
func (c PointContext) PerSource() bool {
	return c.Disagg && strings.HasPrefix(c.Framework, "dynamo-")
}

// MetricSource identifies the server one series of the export came from,
// as the Dynamo adapter reads it: its role from the dynamo_component label
// (prefill; backend is decode; frontend or router is the router; else
// unknown), its endpoint (the series' endpoint_url, else the
// dynamo_endpoint label), worker, DP rank and engine (engine, else
// engine_idx). ID joins adapter, role, endpoint, worker, DP rank and
// engine with "|", an absent one as "".
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

// dynamoSource is the source of one series.
func dynamoSource(endpointURL *string, labels map[string]string) MetricSource {
	label := func(keys ...string) *string {
		for _, k := range keys {
			if v, ok := labels[k]; ok {
				return &v
			}
		}
		return nil
	}
	s := MetricSource{Adapter: "dynamo", Role: "unknown", NativeRole: label("dynamo_component"),
		EndpointURL: endpointURL, WorkerID: label("worker_id"), DPRank: label("dp_rank"), Engine: label("engine", "engine_idx")}
	if s.EndpointURL == nil {
		s.EndpointURL = label("dynamo_endpoint")
	}
	if s.NativeRole != nil {
		switch *s.NativeRole {
		case "prefill":
			s.Role = "prefill"
		case "backend":
			s.Role = "decode"
		case "frontend", "router":
			s.Role = "router"
		}
	}
	part := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	s.ID = strings.Join([]string{"dynamo", s.Role, part(s.EndpointURL), part(s.WorkerID), part(s.DPRank), part(s.Engine)}, "|")
	return s
}

// sourceGroup gathers the series of one source.
type sourceGroup struct {
	source MetricSource
	chart  *chartCollector
}

// sourceOf is the group of a series' source, created on its first series.
func (c *chartCollector) sourceOf(endpointURL *string, labels map[string]string) *sourceGroup {
	src := dynamoSource(endpointURL, labels)
	if g, ok := c.sourceIdx[src.ID]; ok {
		return g
	}
	g := &sourceGroup{source: src, chart: newChartCollector(PointContext{}, c.streamedExport)}
	c.sources = append(c.sources, g)
	c.sourceIdx[src.ID] = g
	return g
}

var roleOrder = map[string]int{"router": 0, "prefill": 1, "decode": 2, "combined": 3, "unknown": 4}

// metricSources are the per-source chart series, ordered by role (router,
// prefill, decode, combined, unknown), then endpoint and id as
// JavaScript's localeCompare orders them (the root collation).
func (c *chartCollector) metricSources(origin float64) []MetricSourceSeries {
	out := make([]MetricSourceSeries, 0, len(c.sources))
	for _, g := range c.sources {
		cs := g.chart.buildFrom(origin)
		out = append(out, MetricSourceSeries{Source: g.source, KVCacheUsage: cs.KVCacheUsage,
			PrefixCacheHitRate: cs.PrefixCacheHitRate, QueueDepth: cs.QueueDepth, PromptTokensBySource: cs.PromptTokensBySource,
			PromptTps: cs.PrefillTps, GenerationTps: cs.DecodeTps, PrefixCacheHitsTps: cs.PrefixCacheHitsTps,
			HostKVCacheUsage: cs.HostKVCacheUsage, KVCacheUsageByEngine: cs.KVCacheUsageByEngine})
	}
	col := collate.New(language.Und)
	endpoint := func(s MetricSource) string {
		if s.EndpointURL == nil {
			return ""
		}
		return *s.EndpointURL
	}
	slices.SortStableFunc(out, func(a, b MetricSourceSeries) int {
		if d := roleOrder[a.Source.Role] - roleOrder[b.Source.Role]; d != 0 {
			return d
		}
		if d := col.CompareString(endpoint(a.Source), endpoint(b.Source)); d != 0 {
			return d
		}
		return col.CompareString(a.Source.ID, b.Source.ID)
	})
	return out
}
