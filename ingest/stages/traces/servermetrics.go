package traces

import (
	"fmt"
	"math"
	"slices"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// serverMetricTolerance is the relative difference above which a published
// server metric disagrees with the derived one (a warning, like power).
const serverMetricTolerance = 0.05

// Client-side metrics the token totals fall back to.
const (
	metricRequests    = "total_requests_completed"
	metricMeanInput   = "mean_input_tokens"
	metricMeanOutput  = "mean_output_tokens_actual"
	agenticTracesType = "agentic_traces"
)

// serverMetricInputs are the stored metrics the derivation reads: the
// owned keys, their published_* copies, the marker and the client totals.
var serverMetricInputs = func() []string {
	keys := slices.Clone(trace.ServerMetricKeys)
	for _, k := range trace.ServerMetricKeys {
		keys = append(keys, trace.PublishedPrefix+k)
	}
	return append(keys, trace.ServerMetricsMarker, metricRequests, metricMeanInput, metricMeanOutput)
}()

// serverMetricsReplaced are the keys the stage's values replace in a row.
var serverMetricsReplaced = func() []string {
	keys := slices.Clone(trace.ServerMetricKeys)
	for _, k := range trace.ServerMetricKeys {
		keys = append(keys, trace.PublishedPrefix+k)
	}
	return append(keys, trace.ServerMetricsMarker)
}()

// serverMetrics derives the owned server-metric keys of every AgentX row
// of the run from its point's server_metrics_export.csv and its server
// log's worker startup lines, keeps what the producer published for them
// under published_<key>, and lists the published values the derived ones
// differ from by more than 5 %.
func (s *traceStage) serverMetrics(a *schema.TraceApply) {
	scrapes := map[int64]trace.Scrape{}
	for _, j := range s.sidecarOrder {
		if j.scrapeProblem != "" && j.failed == "" {
			s.env.Tally.Fail(schema.CategoryRun, j.raw.Name, j.parts[3].path,
				"server_metrics_export.csv unreadable, its rows' server metrics derive without it: "+j.scrapeProblem)
		}
		for _, p := range j.rows {
			if j.failed == "" && j.scrape != nil {
				scrapes[p.RowID] = j.scrape
			}
		}
	}
	logs := map[int64][]trace.LogFileLines{}
	for _, j := range s.logOrder {
		for _, p := range j.rows {
			if j.failed == "" && j.startup != nil {
				logs[p.RowID] = j.startup
			}
		}
	}
	seen := map[int64]bool{}
	var warnings []schema.ServerMetricWarning
	for _, it := range s.items {
		p := it.point
		row, ok := s.rows[p.RowID]
		if !ok || seen[p.RowID] || p.BenchmarkType != agenticTracesType {
			continue
		}
		seen[p.RowID] = true
		c := row.Config
		in := trace.ServerMetricsInput{Framework: c.Framework, Disagg: c.Disagg,
			Prefill: trace.RoleConfig{TP: c.PrefillTP, DPAttention: c.PrefillDPAttention, NumWorkers: c.PrefillNumWorkers},
			Decode:  trace.RoleConfig{TP: c.DecodeTP, DPAttention: c.DecodeDPAttention, NumWorkers: c.DecodeNumWorkers},
			Scrape:  scrapes[p.RowID], Logs: logs[p.RowID],
			ClientPrompt: clientTotal(row.Metrics, metricMeanInput), ClientGeneration: clientTotal(row.Metrics, metricMeanOutput)}
		d := trace.DeriveServerMetrics(in)
		out := map[string]float64{trace.ServerMetricsMarker: trace.ServerMetricsVersion}
		for _, k := range trace.ServerMetricKeys {
			pub, published := publishedValue(row.Metrics, k)
			if published {
				out[trace.PublishedPrefix+k] = pub
			}
			v, derived := d.Values[k]
			if derived {
				out[k] = v
			}
			if published && derived {
				if rel := relDiff(pub, v); rel > serverMetricTolerance {
					warnings = append(warnings, schema.ServerMetricWarning{Artifact: p.Artifact, File: p.File, Field: k,
						Published: pub, Derived: v, RelDiff: rel})
				}
			}
		}
		if d.PoolReason != "" {
			s.env.Log.Debug("AgentX KV-cache pool not derived", zap.String("artifact", p.Artifact), zap.String("file", p.File),
				zap.String("reason", d.PoolReason))
		}
		a.ServerMetrics = append(a.ServerMetrics, schema.RowServerMetrics{RowID: p.RowID, Metrics: out})
	}
	a.ServerMetricsReplaced = serverMetricsReplaced
	sum := s.env.Sum
	sum.Details.ServerMetricRows += int64(len(a.ServerMetrics))
	sum.Details.ServerMetricDisagreements += int64(len(warnings))
	sum.ServerMetricWarnings = append(sum.ServerMetricWarnings, warnings...)
	if n := len(warnings); n > 0 {
		s.env.Tally.Note(fmt.Sprintf("%s the value derived from the raw server metrics by more than %.0f %% (see server metric warnings)",
			runstate.Plural(n, "published AgentX server metric disagrees with", "published AgentX server metrics disagree with"), serverMetricTolerance*100))
	}
}

// publishedValue is the producer's value of an owned key: its published_*
// copy once the row holds the ingest's keys (the marker), else the key.
func publishedValue(m map[string]float64, key string) (float64, bool) {
	if _, ours := m[trace.ServerMetricsMarker]; ours {
		v, ok := m[trace.PublishedPrefix+key]
		return v, ok
	}
	v, ok := m[key]
	return v, ok
}

// clientTotal is a mean per request times the completed requests, NaN
// when either is unknown.
func clientTotal(m map[string]float64, mean string) float64 {
	v, ok1 := m[mean]
	n, ok2 := m[metricRequests]
	if !ok1 || !ok2 {
		return math.NaN()
	}
	return v * n
}

func relDiff(published, derived float64) float64 {
	if published == 0 {
		if derived == 0 {
			return 0
		}
		return 1
	}
	return math.Abs(derived-published) / math.Abs(published)
}
