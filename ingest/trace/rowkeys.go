package trace

import (
	"math"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// Client-side metrics the token totals fall back to.
const (
	metricRequests   = "total_requests_completed"
	metricMeanInput  = "mean_input_tokens"
	metricMeanOutput = "mean_output_tokens_actual"
)

// ServerMetricInputs are the row metrics the owned keys derive from: the
// owned keys, their published_* copies, the marker and the client totals.
func ServerMetricInputs() []string {
	return append(ServerMetricsReplaced(), metricRequests, metricMeanInput, metricMeanOutput)
}

// ServerMetricsReplaced are the keys RowServerMetrics replaces in a row:
// every owned key, its published_* copy and the marker.
func ServerMetricsReplaced() []string {
	keys := slices.Clone(ServerMetricKeys)
	for _, k := range ServerMetricKeys {
		keys = append(keys, PublishedPrefix+k)
	}
	return append(keys, ServerMetricsMarker)
}

// RowInput is the derivation input of an AgentX row from its config and
// its numeric metrics alone; the caller adds the scrape and the worker
// logs where the row has them.
func RowInput(c schema.Config, metrics map[string]float64) ServerMetricsInput {
	return ServerMetricsInput{Framework: c.Framework, Disagg: c.Disagg,
		Prefill:          RoleConfig{TP: c.PrefillTP, DPAttention: c.PrefillDPAttention, NumWorkers: c.PrefillNumWorkers},
		Decode:           RoleConfig{TP: c.DecodeTP, DPAttention: c.DecodeDPAttention, NumWorkers: c.DecodeNumWorkers},
		ClientPrompt:     clientTotal(metrics, metricMeanInput),
		ClientGeneration: clientTotal(metrics, metricMeanOutput)}
}

// RowServerMetrics are the values of the replaced keys (ServerMetricsReplaced)
// once the ingest owns them: the marker, every derived key, and under
// published_<key> what the producer published for an owned key. metrics
// are the row's numeric metrics as they stand (the producer's, or an
// earlier ingest's, told apart by the marker).
func RowServerMetrics(metrics map[string]float64, d DerivedServerMetrics) map[string]float64 {
	out := map[string]float64{ServerMetricsMarker: ServerMetricsVersion}
	for _, k := range ServerMetricKeys {
		if pub, ok := PublishedServerMetric(metrics, k); ok {
			out[PublishedPrefix+k] = pub
		}
		if v, ok := d.Values[k]; ok {
			out[k] = v
		}
	}
	return out
}

// PublishedServerMetric is the producer's value of an owned key: its
// published_* copy once the row holds the ingest's keys (the marker),
// else the key.
func PublishedServerMetric(m map[string]float64, key string) (float64, bool) {
	if _, ours := m[ServerMetricsMarker]; ours {
		v, ok := m[PublishedPrefix+key]
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
