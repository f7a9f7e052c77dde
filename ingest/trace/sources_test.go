package trace

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The facts below restate the dashboard's own test of per-source series
// (compute-chart-series.test.ts, InferenceX-app 7fe6d62: three Dynamo
// workers of a disaggregated point) and follow from its rules by hand, at
// chart series version 20 (08a6bf7: a source is a worker).

// dynamoSeries is one worker's series of a metric, as Dynamo's exports
// label them.
func dynamoSeries(endpoint, component, worker string, field string, v float64) string {
	return fmt.Sprintf(`{"endpoint_url":%q,"labels":{"dynamo_component":%q,"worker_id":%q,"dp_rank":"0","engine":"0"},
		"timeslices":[{"start_ns":0,"end_ns":1e9,%q:%g}]}`, endpoint, component, worker, field, v)
}

// threeWorkers is an export of two prefill workers and one decode worker.
func threeWorkers() string {
	metric := func(name, field string, a, b, c float64) string {
		return fmt.Sprintf(`%q:{"series":[%s,%s,%s]}`, name,
			dynamoSeries("prefill-a.internal.test:7500", "prefill", "prefill-a", field, a),
			dynamoSeries("prefill-b.internal.test:7508", "prefill", "prefill-b", field, b),
			dynamoSeries("decode-a.internal.test:7516", "backend", "decode-a", field, c))
	}
	return `{"metrics":{` + strings.Join([]string{metric("vllm:prompt_tokens", "rate", 100, 200, 300),
		metric("vllm:generation_tokens", "rate", 1, 2, 400), metric("vllm:num_requests_running", "avg", 3, 4, 5)}, ",") + `}}`
}

func sourcesOf(t *testing.T, c map[string]json.RawMessage) []MetricSourceSeries {
	t.Helper()
	var out []MetricSourceSeries
	require.NoError(t, json.Unmarshal(c["metricSources"], &out))
	return out
}

func TestMetricSources(t *testing.T) {
	disagg := PointContext{Framework: "dynamo-vllm", Disagg: true}
	t.Run("one source per worker of a disaggregated Dynamo point", func(t *testing.T) {
		c := chartFor(t, 0, threeWorkers(), disagg)
		srcs := sourcesOf(t, c)
		require.Len(t, srcs, 3)
		var got [][3]string
		for _, s := range srcs {
			got = append(got, [3]string{s.Source.Role, *s.Source.WorkerID, s.Source.ID})
		}
		require.Equal(t, [][3]string{{"prefill", "prefill-a", "dynamo|prefill|prefill-a"}, {"prefill", "prefill-b", "dynamo|prefill|prefill-b"},
			{"decode", "decode-a", "dynamo|decode|decode-a"}}, got)
		prefillA, decode := srcs[0], srcs[2]
		require.Equal(t, []Point{{0, 100}}, prefillA.PromptTps)
		require.Equal(t, []QueuePoint{{0, 3, 0, 3}}, prefillA.QueueDepth)
		require.Equal(t, []Point{{0, 400}}, decode.GenerationTps)
		// The whole point's series still sum every worker.
		require.JSONEq(t, `[{"t":0,"value":600}]`, string(c["prefillTps"]))
		// Every field of the source, in the dashboard's shape.
		var raw []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(c["metricSources"], &raw))
		// A source is a worker: its DP rank and engine are not named.
		require.JSONEq(t, `{"id":"dynamo|prefill|prefill-a","adapter":"dynamo","role":"prefill",
			"endpointUrl":"prefill-a.internal.test:7500","nativeRole":"prefill","workerId":"prefill-a","dpRank":null,"engine":null}`,
			string(raw[0]["source"]))
		require.Len(t, raw[0], 10)
		// Without a per-source prompt breakdown or cache hits, the prompt
		// counter is all computed (missed) tokens.
		require.JSONEq(t, `{"source":{"id":"dynamo|decode|decode-a","adapter":"dynamo","role":"decode",
			"endpointUrl":"decode-a.internal.test:7516","nativeRole":"backend","workerId":"decode-a","dpRank":null,"engine":null},
			"kvCacheUsage":[],"prefixCacheHitRate":[],"queueDepth":[{"t":0,"running":5,"waiting":0,"total":5}],
			"promptTokensBySource":{"compute (miss)":[{"t":0,"value":300}]},"promptTps":[{"t":0,"value":300}],"generationTps":[{"t":0,"value":400}],
			"prefixCacheHitsTps":[],"hostKvCacheUsage":[],"kvCacheUsageByEngine":[]}`, mustJSON(decode))
	})
	t.Run("none for an aggregated point or another framework", func(t *testing.T) {
		require.JSONEq(t, `[]`, string(chartFor(t, 0, threeWorkers(), PointContext{Framework: "dynamo-vllm"})["metricSources"]))
		require.JSONEq(t, `[]`, string(chartFor(t, 0, threeWorkers(), PointContext{Framework: "vllm", Disagg: true})["metricSources"]))
	})
	t.Run("timed from the whole export, roles ordered, every metric's series", func(t *testing.T) {
		// The router's series start 2 s before the workers'; an uncharted
		// metric's series of an unlabelled server is a source of its own
		// (with empty series) when the export is read whole, not when it
		// is streamed; an endpoint from the dynamo_endpoint label.
		doc := `{"metrics":{
			"vllm:num_requests_running":{"series":[
				{"labels":{"dynamo_component":"backend","dynamo_endpoint":"dyn://decode","worker_id":"7"},"timeslices":[{"start_ns":2e9,"end_ns":3e9,"avg":4}]},
				{"endpoint_url":"http://fe:8000/metrics","labels":{"dynamo_component":"frontend"},"timeslices":[{"start_ns":0,"end_ns":1e9,"avg":9}]}]},
			"dynamo_frontend_requests":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"avg":1}]}]}}}`
		srcs := sourcesOf(t, chartFor(t, 0, doc, disagg))
		var ids []string
		for _, s := range srcs {
			ids = append(ids, s.Source.ID)
		}
		require.Equal(t, []string{"dynamo|router|http://fe:8000/metrics", "dynamo|decode|7", "dynamo|unknown|"}, ids)
		require.Equal(t, "dyn://decode", *srcs[1].Source.EndpointURL)
		require.Equal(t, []QueuePoint{{2, 4, 0, 4}}, srcs[1].QueueDepth, "t from the export's earliest start")
		require.Empty(t, srcs[2].QueueDepth)
		require.Nil(t, srcs[2].Source.EndpointURL)
		streamed := sourcesOf(t, chartFor(t, inMemoryExportLimit+1, doc, disagg))
		require.Len(t, streamed, 2, "a streamed export's sources come from the charted metrics")
	})
	t.Run("ordered by endpoint as localeCompare orders", func(t *testing.T) {
		// Root collation, not bytes: "a|" sorts before "ab" ("|" is
		// punctuation, before letters), and case is secondary to letters.
		doc := `{"metrics":{"vllm:prompt_tokens":{"series":[
			{"endpoint_url":"ab","labels":{"dynamo_component":"prefill"},"timeslices":[{"start_ns":0,"rate":1}]},
			{"endpoint_url":"B","labels":{"dynamo_component":"prefill"},"timeslices":[{"start_ns":0,"rate":1}]},
			{"endpoint_url":"a|","labels":{"dynamo_component":"prefill"},"timeslices":[{"start_ns":0,"rate":1}]}]}}}`
		var eps []string
		for _, s := range sourcesOf(t, chartFor(t, 0, doc, disagg)) {
			eps = append(eps, *s.Source.EndpointURL)
		}
		require.Equal(t, []string{"a|", "ab", "B"}, eps)
	})
}
