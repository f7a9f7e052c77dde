package trace

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "rerun with -update")
	require.Equal(t, string(want), string(got), "%s differs; rerun with -update and review", path)
}

// Every raw sibling layout, and pairing by per-concurrency file names.
func TestLocateLayouts(t *testing.T) {
	cases := []struct {
		name  string
		conc  int
		files []string
	}{
		{"single-node rooted at results/", 0, []string{
			"aiperf_artifacts/logs/aiperf.log", "aiperf_artifacts/profile_export.jsonl", "aiperf_artifacts/profile_export_aiperf.json",
			"aiperf_artifacts/server_metrics_export.csv", "aiperf_artifacts/server_metrics_export.json", "benchmark.log", "server.log"}},
		{"single-node with a results/ prefix", 0, []string{
			"results/aiperf_artifacts/profile_export.jsonl", "results/aiperf_artifacts/server_metrics_export.json", "results/server.log"}},
		{"nested older AIPerf", 0, []string{
			"aiperf_artifacts/run_0/profile_export.jsonl", "aiperf_artifacts/run_0/profile_export_aiperf.json", "server.log"}},
		{"trace_replay directory", 0, []string{"trace_replay/profile_export.jsonl", "trace_replay/server_metrics_export.csv"}},
		{"multinode conc_16", 16, []string{
			"conc_16/aiperf_artifacts/profile_export.jsonl", "conc_16/aiperf_artifacts/server_metrics_export.json", "conc_16/benchmark.log",
			"conc_4/aiperf_artifacts/profile_export.jsonl"}},
		{"multinode conc_4 nested", 4, []string{
			"conc_16/aiperf_artifacts/profile_export.jsonl", "conc_4/aiperf_artifacts/run_0/profile_export.jsonl"}},
		{"per-concurrency file without a conc dir falls back to the root", 8, []string{"aiperf_artifacts/profile_export.jsonl"}},
		{"no profile", 0, []string{"aiperf_artifacts/profile_export_aiperf.json", "server.log"}},
		{"two children are not nested", 0, []string{"aiperf_artifacts/run_0/profile_export.jsonl", "aiperf_artifacts/run_1/profile_export.jsonl"}},
	}
	type result struct {
		Case  string `json:"case"`
		Found bool   `json:"found"`
		Files Files  `json:"files"`
	}
	var out []result
	r := rand.New(rand.NewSource(1))
	for _, c := range cases {
		f, ok := Locate(c.files, c.conc)
		// Listing order never matters.
		shuffled := append([]string(nil), c.files...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		f2, ok2 := Locate(shuffled, c.conc)
		require.Equal(t, ok, ok2, c.name)
		require.Equal(t, f, f2, c.name)
		out = append(out, result{c.name, ok, f})
	}
	golden(t, "layouts.golden.json", out)
}

func TestPairingNames(t *testing.T) {
	rf := "dsv4_tp8_conc16_kvdram-hicache_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_05_recipe-0c7d1e2f3a4b5c6d"
	raw, ok := RawSiblingName("bmk_agentic_" + rf)
	require.True(t, ok)
	require.Equal(t, "agentic_"+rf, raw)
	_, ok = RawSiblingName("bmk_" + rf)
	require.False(t, ok)
	key, ok := ServerLogKey("bmk_agentic_" + rf)
	require.True(t, ok)
	require.Equal(t, rf, key)
	key, _ = ServerLogKey("bmk_" + rf)
	require.Equal(t, rf, key)
	require.Zero(t, ConcOfFile(rf+".json"), "the single-node RF carries _conc16_ inside, not at the end")
	require.Equal(t, 16, ConcOfFile("kimik3_p1x8_d0x8_conc16_fp4_dynamo-vllm_x_conc16.json"))
}

func readTestdata(t *testing.T) (*Profile, *ServerMetrics) {
	t.Helper()
	f, err := os.Open("testdata/profile_export.jsonl")
	require.NoError(t, err)
	defer f.Close()
	p, err := ReadProfile(f)
	require.NoError(t, err)
	m, err := os.Open("testdata/server_metrics_export.json")
	require.NoError(t, err)
	defer m.Close()
	sm, err := ReadServerMetrics(m, 0, PointContext{})
	require.NoError(t, err)
	return p, sm
}

// The derived payloads of a small real-shaped trace: accounting (warmup,
// errors, bare-number metrics, a blank line), statistics, per-second
// series from the vLLM export (warmup metrics ignored) and the timeline.
func TestDerivedPayloadsGolden(t *testing.T) {
	p, sm := readTestdata(t)
	require.EqualValues(t, 9, p.Accounting.Total)
	require.Equal(t, 9, p.Requests(), "every record is on the timeline, warmup and failed ones included")
	require.EqualValues(t, 5, p.Accounting.Profiled)
	require.EqualValues(t, 3, p.Accounting.WarmupDropped)
	require.EqualValues(t, 2, p.Accounting.ErrorDropped)
	require.Equal(t, map[string]int64{"RequestCancellationError": 1, "HTTPStatusError": 1}, p.Accounting.ErrorCategories)
	require.Equal(t, "vllm", sm.Adapter)
	require.Equal(t, 8, sm.MetricCount)
	d, err := Derive(p, sm)
	require.NoError(t, err)
	// 330000 HBM hits (local_cache_hit) and 40000 external of 689000
	// prompt tokens.
	require.InDelta(t, 330000.0/689000, d.Metrics["derived_gpu_cache_hit_rate"], 1e-9)
	require.InDelta(t, 40000.0/689000, d.Metrics["derived_cpu_cache_hit_rate"], 1e-9)
	for k := range d.Metrics {
		require.True(t, strings.HasPrefix(k, "derived_"), "%s: every derived metric has its own name", k)
	}
	require.Nil(t, d.KVCapacity)
	var tl bytes.Buffer
	require.NoError(t, p.WriteTimeline(&tl))
	require.True(t, json.Valid(tl.Bytes()))
	golden(t, "derived.golden.json", map[string]any{
		"aggregateStats":  json.RawMessage(d.AggregateStats),
		"chartSeries":     json.RawMessage(d.ChartSeries),
		"requestTimeline": json.RawMessage(tl.Bytes()),
		"metrics":         d.Metrics,
	})
}

func TestDerivedWithoutServerMetrics(t *testing.T) {
	p, _ := readTestdata(t)
	d, err := Derive(p, nil)
	require.NoError(t, err)
	require.NotContains(t, d.Metrics, "derived_gpu_cache_hit_rate")
	require.Contains(t, d.Metrics, "derived_median_full_response_itl")
	require.InDelta(t, 1/d.Metrics["derived_median_full_response_itl"], d.Metrics["derived_median_full_response_intvty"], 1e-6)
}

func TestReadProfileErrors(t *testing.T) {
	const ok = "{\"metadata\":{\"conversation_id\":\"a\"}}\n"
	cases := map[string]string{
		"":                    "no records",
		ok + "[1,2]\n":        "line 2: not a JSON object",
		ok + "{\"metadata\":": "line 2 (last, no newline)",
		"{\"metadata\":{\"request_start_ns\":\"x\"}}\n": "line 1:",
		// Records holding nothing the aggregator reads are no requests.
		ok + "{}\n":                "line 2: empty record",
		ok + "{\"metadata\":{}}\n": "line 2: empty record",
		ok + "{\"metrics\":null,\"metadata\":null}\n":              "line 2: empty record",
		ok + "{\"metadata\":{\"session_num\":3},\"error\":null}\n": "line 2: empty record",
		// Values beyond float32 name their line and field.
		ok + "{\"metrics\":{\"time_to_first_token\":1e300}}\n":                             "line 2: metrics.time_to_first_token: 1e+300 is out of range",
		ok + "{\"metrics\":{\"inter_token_latency\":{\"value\":-1e39,\"unit\":\"ms\"}}}\n": "line 2: metrics.inter_token_latency: -1e+39 is out of range",
		ok + "{\"metrics\":{\"request_latency\":1e300}}\n":                                 "line 2: metrics.request_latency",
	}
	for in, want := range cases {
		_, err := ReadProfile(strings.NewReader(in))
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
}

// Only records with something the aggregator reads count; an error-only
// or phase-only record still does.
func TestReadProfileCountsOnlyRealRecords(t *testing.T) {
	in := "{\"metadata\":{\"conversation_id\":\"a\",\"request_start_ns\":1,\"request_end_ns\":2}}\n" +
		"{\"error\":{\"type\":\"HTTPStatusError\"}}\n" +
		"{\"metadata\":{\"benchmark_phase\":\"warmup\"}}\n"
	p, err := ReadProfile(strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, Accounting{Total: 3, Profiled: 1, WarmupDropped: 1, ErrorDropped: 1,
		ErrorCategories: map[string]int64{"HTTPStatusError": 1}}, p.Accounting)
}

// A profile line with a duplicate key, a NUL or invalid UTF-8 in a string
// (escaped lone surrogates included) fails the trace, naming the line and
// the field, instead of being resolved, stripped or replaced.
func TestReadProfileStrictJSON(t *testing.T) {
	const ok = "{\"metadata\":{\"conversation_id\":\"a\"}}\n"
	for _, tc := range []struct{ name, line, want string }{
		{"duplicate key", `{"metadata":{"conversation_id":"a","conversation_id":"b"}}`, `line 2: duplicate key "metadata.conversation_id"`},
		{"duplicate top-level key", `{"metrics":{},"metadata":{"conversation_id":"a"},"metrics":{"time_to_first_token":5}}`, `line 2: duplicate key "metrics"`},
		{"escaped NUL", `{"metadata":{"conversation_id":"a\u0000c"}}`, `line 2: field "metadata.conversation_id": string holds a NUL`},
		{"lone surrogate", `{"metadata":{"conversation_id":"a\ud800b"}}`, `line 2: field "metadata.conversation_id": invalid UTF-8`},
		{"invalid UTF-8", "{\"metadata\":{\"worker_id\":\"w\xff\"}}", `line 2: field "metadata.worker_id": invalid UTF-8`},
		{"NUL in an error", `{"metadata":{"conversation_id":"a"},"error":{"type":"Bad\u0000Type"}}`, `line 2: field "error.type": string holds a NUL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadProfile(strings.NewReader(ok + tc.line + "\n"))
			require.EqualError(t, err, tc.want)
		})
	}
}

// Duplicate keys in server_metrics_export.json fail it: the decoder would
// otherwise read one metric twice or keep the later value.
func TestReadServerMetricsStrictJSON(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"metrics twice", `{"metrics": {}, "metrics": {}}`, `duplicate key "metrics"`},
		{"metric twice", `{"metrics": {"vllm:num_requests_running": {"series": []}, "vllm:num_requests_running": {"series": []}}}`,
			`metrics: duplicate key "vllm:num_requests_running"`},
		{"duplicate inside a metric", `{"metrics": {"vllm:num_requests_running": {"series": [], "series": []}}}`,
			`metrics: vllm:num_requests_running: duplicate key "series"`},
		{"NUL inside a metric", `{"metrics": {"vllm:num_requests_running": {"type": "g\u0000", "series": []}}}`,
			`metrics: vllm:num_requests_running: field "type": string holds a NUL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadServerMetrics(strings.NewReader(tc.doc), 0, PointContext{})
			require.EqualError(t, err, tc.want)
		})
	}
}

// KV capacity from the real SGLang exports of PR 2823: shards of one engine
// count once, DP ranks add up.
func TestKVCapacityFromServerMetrics(t *testing.T) {
	raw, err := os.ReadFile("testdata/sglang-kv-capacity-pr2823.json")
	require.NoError(t, err)
	var byConc map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &byConc))
	capOf := func(metrics map[string]json.RawMessage) *int64 {
		b, err := json.Marshal(map[string]any{"metrics": metrics, "warmup_metrics": map[string]any{}})
		require.NoError(t, err)
		sm, err := ReadServerMetrics(bytes.NewReader(b), 0, PointContext{})
		require.NoError(t, err)
		return sm.KVCapacity()
	}
	got := map[string]any{}
	for _, conc := range []string{"4", "256"} {
		got[conc] = capOf(byConc[conc])
	}
	require.EqualValues(t, 6338048, *got["4"].(*int64))
	require.EqualValues(t, 241231872, *got["256"].(*int64))

	// The first worker duplicated on another endpoint adds up.
	var m metric
	require.NoError(t, json.Unmarshal(byConc["4"]["sglang:max_total_num_tokens"], &m))
	dup := m.Series[0]
	dup.EndpointURL = "10.24.112.199:8000"
	m.Series = append(m.Series, dup)
	b, _ := json.Marshal(m)
	v := capOf(map[string]json.RawMessage{"sglang:max_total_num_tokens": b})
	require.EqualValues(t, 9549824, *v)
	got["4 with a duplicated worker"] = v

	// A value that changes over time, or replicas that disagree: unknown.
	m.Series[1].Timeslices = append(m.Series[1].Timeslices, timeslice{StartNs: 1e9, EndNs: 2e9, Avg: new(1.0)})
	b, _ = json.Marshal(m)
	require.Nil(t, capOf(map[string]json.RawMessage{"sglang:max_total_num_tokens": b}))
	golden(t, "kv_capacity.golden.json", got)
}

func TestKVCapacityFromServerLogs(t *testing.T) {
	scan := func(lines ...string) *int64 {
		k := NewKVScanner()
		// Written in odd pieces: lines may be split anywhere.
		text := strings.Join(lines, "\n")
		for len(text) > 0 {
			n := min(7, len(text))
			_, _ = k.Write([]byte(text[:n]))
			text = text[n:]
		}
		return k.Tokens()
	}
	v := scan("(EngineCore_DP0 pid=1) INFO GPU KV cache size: 1,234,567 tokens",
		"(EngineCore_DP1 pid=2) INFO GPU KV cache size: 1,234,567 tokens",
		"(EngineCore_DP1 pid=2) INFO GPU KV cache size: 1,234,567 tokens")
	require.EqualValues(t, 2469134, *v, "one value per EngineCore tag, summed over tags")
	v = scan("INFO GPU KV cache size: 1,000 tokens", "INFO GPU KV cache size: 2,000 tokens")
	require.EqualValues(t, 3000, *v, "untagged lines are summed")
	v = scan("[2026-08-13 05:04:12 DP0 TP0] max_total_num_tokens=4382208, chunked_prefill_size=8192",
		"[2026-08-13 05:04:12 DP1 TP8] max_total_num_tokens=4382208, chunked_prefill_size=8192")
	require.EqualValues(t, 8764416, *v, "SGLang: one value per DP rank")
	v = scan("[2026-08-13 05:04:12 TP0] max_total_num_tokens=4382208, chunked_prefill_size=8192")
	require.EqualValues(t, 4382208, *v)

	// The real memory-log excerpts name no capacity.
	for _, f := range []string{"testdata/agentic-memory-sglang.json", "testdata/agentic-memory-vllm.json"} {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc struct {
			Lines []string `json:"lines"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		require.NotEmpty(t, doc.Lines)
		require.Nil(t, scan(doc.Lines...), f)
	}
}

func TestDatasetSlugOfTheRealAggregate(t *testing.T) {
	raw, err := os.ReadFile("testdata/h100-retry-attempt1.json")
	require.NoError(t, err)
	var row map[string]any
	require.NoError(t, json.Unmarshal(raw, &row))
	slug, ok := DatasetSlug(row)
	require.True(t, ok)
	require.Equal(t, "cc-traces-weka-062126", slug)
	for _, c := range []struct {
		ds   any
		want string
	}{
		{map[string]any{"source_type": "public_dataset", "hf_dataset_name": " org/name/ "}, "name"},
		{map[string]any{"source_type": "local", "hf_dataset_name": "org/name"}, ""},
		{map[string]any{"source_type": "public_dataset"}, ""},
		{"text", ""},
	} {
		got, _ := DatasetSlug(map[string]any{"dataset": c.ds})
		require.Equal(t, c.want, got)
	}
}

func TestDatasetSlugIsCleaned(t *testing.T) {
	for in, want := range map[string]string{
		"org/cc-traces\x00-1": "cc-traces-1",
		"org/caf\xe9":         "caf\uFFFD",
		"org/\x00":            "",
	} {
		got, ok := DatasetSlug(map[string]any{"dataset": map[string]any{"source_type": "public_dataset", "hf_dataset_name": in}})
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, want != "", ok, "%q", in)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{4, 1, 3, 2}
	b := Summarize(v)
	require.Equal(t, 2.5, b.P50)
	require.Equal(t, 3.25, b.P75)
	require.InDelta(t, 1.118033989, b.Std, 1e-9)
	require.True(t, sort.Float64sAreSorted(v))
	require.Nil(t, Summarize(nil))
}

func jsonValid(b []byte) bool { return json.Valid(b) }
