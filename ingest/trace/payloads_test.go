package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The payloads' expected values below restate the facts of the
// dashboard's own tests of compute-request-timeline, compute-aggregate-stats
// and compute-chart-series (InferenceX-app 7fe6d62) and follow from its
// formulas by hand, at the versions this package writes (the newer rules of
// 58192f20 and 08a6bf7, which left these facts unchanged but for the
// version, p95, the sketches and the per-engine lines of one engine); they
// are not produced by this package.

// rec is one profile record for a test; zero fields are left out.
type rec struct {
	cid, wid, phase, srcTrace, srcKind string
	root, xcorr                        any // root_correlation_id, x_correlation_id
	ti, ad                             any
	srcOuter, srcInner                 any
	credit, start, ack, end            any
	ttft, tpot, itl, isl, osl, latency any
	cancelled                          bool
	err                                string
}

func (r rec) line() string {
	md := map[string]any{}
	set := func(m map[string]any, k string, v any) {
		if v != nil && v != "" {
			m[k] = v
		}
	}
	set(md, "conversation_id", r.cid)
	if r.root != nil {
		md["root_correlation_id"] = r.root
	}
	if r.xcorr != nil {
		md["x_correlation_id"] = r.xcorr
	}
	set(md, "worker_id", r.wid)
	set(md, "benchmark_phase", r.phase)
	set(md, "source_trace_id", r.srcTrace)
	set(md, "source_kind", r.srcKind)
	set(md, "turn_index", r.ti)
	set(md, "agent_depth", r.ad)
	set(md, "source_outer_idx", r.srcOuter)
	set(md, "source_inner_idx", r.srcInner)
	set(md, "credit_issued_ns", r.credit)
	set(md, "request_start_ns", r.start)
	set(md, "request_ack_ns", r.ack)
	set(md, "request_end_ns", r.end)
	if r.cancelled {
		md["was_cancelled"] = true
	}
	m := map[string]any{}
	env := func(k string, v any, unit string) {
		if v != nil {
			m[k] = map[string]any{"value": v, "unit": unit}
		}
	}
	env("time_to_first_token", r.ttft, "ms")
	env("time_per_output_token", r.tpot, "ms")
	env("inter_token_latency", r.itl, "ms")
	env("input_sequence_length", r.isl, "tokens")
	env("output_sequence_length", r.osl, "tokens")
	env("request_latency", r.latency, "ms")
	doc := map[string]any{"metadata": md, "metrics": m}
	if r.err != "" {
		doc["error"] = map[string]any{"type": r.err}
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

func profileOf(t *testing.T, rs ...rec) *Profile {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.line() + "\n")
	}
	p, err := ReadProfile(strings.NewReader(b.String()))
	require.NoError(t, err)
	return p
}

type timelineDoc struct {
	Version   int              `json:"version"`
	StartNs   float64          `json:"startNs"`
	EndNs     float64          `json:"endNs"`
	DurationS float64          `json:"durationS"`
	Requests  []map[string]any `json:"requests"`
}

func timelineOf(t *testing.T, p *Profile) (timelineDoc, string) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, p.WriteTimeline(&b))
	var d timelineDoc
	require.NoError(t, json.Unmarshal(b.Bytes(), &d), b.String())
	return d, b.String()
}

func TestRequestTimelineV6(t *testing.T) {
	t.Run("times from the earliest credit", func(t *testing.T) {
		p := profileOf(t,
			rec{cid: "a", ti: 0, credit: 1_000_000_000, start: 1_001_000_000, end: 1_010_000_000},
			rec{cid: "a", ti: 1, credit: 1_020_000_000, start: 1_021_000_000, end: 1_030_000_000})
		d, _ := timelineOf(t, p)
		require.Equal(t, 6, d.Version)
		require.Equal(t, 1e9, d.StartNs)
		require.Equal(t, 1.03e9, d.EndNs)
		require.Equal(t, 0.03, d.DurationS) // 30 000 000 ns
		require.Equal(t, 0.0, d.Requests[0]["credit"])
		require.Equal(t, 1e6, d.Requests[0]["start"])
		require.Equal(t, 1e7, d.Requests[0]["end"])
		require.Equal(t, 2.1e7, d.Requests[1]["start"])
	})
	t.Run("ordered by start whatever the file order", func(t *testing.T) {
		p := profileOf(t,
			rec{cid: "a", ti: 0, credit: 30, start: 50, end: 60},
			rec{cid: "a", ti: 1, credit: 1, start: 10, end: 20},
			rec{cid: "a", ti: 2, credit: 80, start: 90, end: 100},
			rec{cid: "b", ti: 3, credit: 40, start: 50, end: 55})
		d, _ := timelineOf(t, p)
		var starts, tis []any
		for _, r := range d.Requests {
			starts, tis = append(starts, r["start"]), append(tis, r["ti"])
		}
		// Origin 1 (earliest credit): starts 9, 49, 49, 89; equal starts
		// keep file order.
		require.Equal(t, []any{9.0, 49.0, 49.0, 89.0}, starts)
		require.Equal(t, []any{1.0, 0.0, 3.0, 2.0}, tis)
	})
	t.Run("every field of a request", func(t *testing.T) {
		p := profileOf(t,
			rec{cid: "trace::fa:003", ti: 3, srcTrace: "trace", srcOuter: 204, srcInner: 16, srcKind: "weka_flat",
				wid: "worker_abcd1234", ad: 2, phase: "profiling", credit: 0, start: 10, ack: 40, end: 100,
				ttft: 25.5, tpot: 12.5, itl: 99.0, isl: 1024, osl: 256, cancelled: true})
		_, raw := timelineOf(t, p)
		require.JSONEq(t, `{"version":6,"startNs":0,"endNs":100,"durationS":1e-7,"requests":[{"cid":"trace::fa:003","ti":3,
			"srcTrace":"trace","srcOuter":204,"srcInner":16,"srcKind":"weka_flat","wid":"worker_abcd1234","ad":2,
			"phase":"profiling","credit":0,"start":10,"ack":40,"end":100,"ttftMs":25.5,"tpotMs":12.5,"isl":1024,
			"osl":256,"cancelled":true}]}`, raw, "time_per_output_token wins over inter_token_latency")
	})
	t.Run("absent values", func(t *testing.T) {
		// No credit (start stands in), no ack, no metrics, no names, no
		// source fields; inter_token_latency as the TPOT.
		p := profileOf(t, rec{start: 5, end: 9, itl: 8.25}, rec{cid: "c", credit: 2, end: 3})
		_, raw := timelineOf(t, p)
		require.JSONEq(t, `{"version":6,"startNs":2,"endNs":9,"durationS":7e-9,"requests":[
			{"cid":"c","ti":0,"wid":"unknown","ad":0,"phase":"unknown","credit":0,"start":0,"ack":null,"end":1,
			 "ttftMs":null,"tpotMs":null,"isl":null,"osl":null,"cancelled":false},
			{"cid":"unknown","ti":0,"wid":"unknown","ad":0,"phase":"unknown","credit":3,"start":3,"ack":null,"end":7,
			 "ttftMs":null,"tpotMs":8.25,"isl":null,"osl":null,"cancelled":false}]}`, raw)
	})
	t.Run("records without dispatch or end time are left out", func(t *testing.T) {
		p := profileOf(t, rec{cid: "a", end: 1234}, rec{cid: "b", start: 5, phase: "warmup"})
		require.False(t, p.HasTimeline())
		p = profileOf(t, rec{cid: "a", end: 1234}, rec{cid: "b", start: 5, end: 6, err: "HTTPStatusError", phase: "warmup"})
		d, _ := timelineOf(t, p)
		require.Len(t, d.Requests, 1, "warmup and failed records are on the timeline")
		require.Equal(t, "warmup", d.Requests[0]["phase"])
	})
	t.Run("replay lanes", func(t *testing.T) {
		ris := func(d timelineDoc) []any {
			var out []any
			for _, r := range d.Requests {
				out = append(out, r["ri"])
			}
			return out
		}
		// One conversation replayed in two lanes at once: one id each.
		d, _ := timelineOf(t, profileOf(t,
			rec{cid: "reused-conversation", ti: 26, root: "root-a", credit: 10, start: 20, end: 100},
			rec{cid: "reused-conversation", ti: 40, root: "root-b", credit: 30, start: 40, end: 120}))
		require.Equal(t, []any{0.0, 1.0}, ris(d))
		// Every turn and subagent request of a lane, warmup and profiling,
		// share its id.
		d, _ = timelineOf(t, profileOf(t,
			rec{cid: "conversation", ti: 0, root: "root-a", phase: "warmup", credit: 0, start: 1, end: 10},
			rec{cid: "conversation", ti: 1, root: "root-a", phase: "profiling", credit: 20, start: 21, end: 30},
			rec{cid: "conversation::sa:subagent_001_abcd", ti: 1, root: "root-a", phase: "profiling", credit: 22, start: 23, end: 29}))
		require.Equal(t, []any{0.0, 0.0, 0.0}, ris(d))
		// x_correlation_id stands in; ids rank by first dispatch, not by
		// file order.
		d, _ = timelineOf(t, profileOf(t,
			rec{cid: "conversation", ti: 1, xcorr: "later", credit: 100, start: 110, end: 120},
			rec{cid: "conversation", ti: 0, xcorr: "earlier", credit: 0, start: 10, end: 20}))
		require.Equal(t, []any{0.0, 1.0}, ris(d))
		require.Equal(t, []any{0.0, 1.0}, []any{d.Requests[0]["ti"], d.Requests[1]["ti"]})
		// Equal first dispatches rank by key; a lane's first dispatch is its
		// earliest, wherever it is in the file.
		d, _ = timelineOf(t, profileOf(t,
			rec{ti: 0, root: "b", credit: 50, start: 50, end: 60},
			rec{ti: 1, root: "a", credit: 5, start: 5, end: 6},
			rec{ti: 2, root: "b", credit: 5, start: 7, end: 8}))
		require.Equal(t, []any{0.0, 1.0, 1.0}, ris(d))
		// No correlation id: no "ri". A present root that is empty or not a
		// string hides x_correlation_id (JavaScript's ??); a null one does not.
		_, raw := timelineOf(t, profileOf(t,
			rec{cid: "legacy", ti: 0, credit: 0, start: 10, end: 20},
			rec{cid: "empty-root", ti: 1, root: "", xcorr: "x1", credit: 1, start: 11, end: 21},
			rec{cid: "number-root", ti: 2, root: 7, xcorr: "x2", credit: 2, start: 12, end: 22}))
		require.NotContains(t, raw, `"ri"`)
		d, _ = timelineOf(t, profileOf(t, rec{cid: "c", ti: 0, root: json.RawMessage("null"), xcorr: "x3", credit: 0, start: 10, end: 20}))
		require.Equal(t, []any{0.0}, ris(d))
	})
	t.Run("epoch nanoseconds as float64", func(t *testing.T) {
		// 1787300000000000123 reads as the float64 1787300000000000000 and
		// …0456 as …0512 (float64 steps are 256 ns there): the end is
		// 512 ns after the start, as the dashboard computes it.
		p := profileOf(t, rec{cid: "a", start: json.Number("1787300000000000123"), end: json.Number("1787300000000000456")})
		d, raw := timelineOf(t, p)
		require.Equal(t, 512.0, d.Requests[0]["end"])
		require.Contains(t, raw, `"startNs":1787300000000000000,`)
	})
}

func TestAggregateStatsV10(t *testing.T) {
	ratio := func(rl, osl float64) float64 { return rl / 1000 / osl }
	t.Run("from the profile", func(t *testing.T) {
		p := profileOf(t,
			rec{phase: "profiling", cid: "c0", isl: 100, osl: 50, latency: 1000, ttft: 100},
			rec{phase: "profiling", cid: "c1", isl: 200, osl: 75, latency: 2000, ttft: 200},
			rec{phase: "profiling", cid: "c2", isl: 300, osl: 100, latency: 3000, ttft: 300})
		d, err := Derive(p, nil)
		require.NoError(t, err)
		var st struct {
			Version                                       int
			ISL, OSL, KVCacheUtil, PrefixCacheHitRate, E2 *Percentiles
		}
		require.NoError(t, json.Unmarshal(d.AggregateStats, &st))
		var e2 struct {
			E2ELPerOSL *Percentiles `json:"e2elPerOsl"`
		}
		require.NoError(t, json.Unmarshal(d.AggregateStats, &e2))
		require.Equal(t, 10, st.Version)
		require.Equal(t, &Percentiles{Mean: 200, P50: 200, P75: 250, P90: 280, P95: 290, P99: 298, N: 3}, st.ISL)
		require.Equal(t, 75.0, st.OSL.Mean)
		require.Nil(t, st.KVCacheUtil)
		require.Nil(t, st.PrefixCacheHitRate)
		r := []float64{ratio(1000, 50), ratio(2000, 75), ratio(3000, 100)}
		require.Equal(t, 3, e2.E2ELPerOSL.N)
		require.Equal(t, r[1], e2.E2ELPerOSL.P50)
		// p90 of three: rank 1.8, between the second and third.
		require.InDelta(t, r[1]+0.8*(r[2]-r[1]), e2.E2ELPerOSL.P90, 1e-15)
		require.InDelta(t, (r[0]+r[1]+r[2])/3, e2.E2ELPerOSL.Mean, 1e-15)
		// ISL 100 → bin 6·256 + 144, 200 → 7·256 + 144, 300 → 8·256 + 44;
		// OSL 50 → 5·256 + 144, 75 → 6·256 + 44, 100 → 6·256 + 144.
		seq := sequenceLengths{
			ISL: &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: 3, MinBin: 1680, Counts: sparseCounts(413, map[int]int{0: 1, 256: 1, 412: 1})},
			OSL: &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: 3, MinBin: 1424, Counts: sparseCounts(257, map[int]int{0: 1, 156: 1, 256: 1})}}
		require.JSONEq(t, `{"version":10,"isl":{"mean":200,"p50":200,"p75":250,"p90":280,"p95":290,"p99":298,"n":3},
			"osl":{"mean":75,"p50":75,"p75":87.5,"p90":95,"p95":97.5,"p99":99.5,"n":3},"kvCacheUtil":null,"prefixCacheHitRate":null,
			"e2elPerOsl":`+mustJSON(e2.E2ELPerOSL)+`,"sequenceLengths":`+mustJSON(seq)+`}`, string(d.AggregateStats))
	})
	t.Run("which records count", func(t *testing.T) {
		// Warmup and cancellations are left out; an empty phase, no
		// phase and errors count for ISL and OSL; the E2E ratio needs
		// latency, TTFT, ISL and OSL all positive.
		p := profileOf(t,
			rec{phase: "warmup", cid: "w", isl: 999, osl: 999, latency: 1, ttft: 1},
			rec{cid: "a", isl: 10, osl: 0, latency: 500, ttft: 10},
			rec{cid: "b", phase: "profiling", isl: 20, osl: 20, latency: 400, ttft: 10, err: "HTTPStatusError"},
			rec{cid: "c", phase: "profiling", isl: 30, osl: 40, latency: 800, cancelled: true},
			rec{cid: "d", phase: "profiling", osl: 10, latency: 100, ttft: 5})
		d, err := Derive(p, nil)
		require.NoError(t, err)
		var st map[string]*Percentiles
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(d.AggregateStats, &raw))
		delete(raw, "version")
		delete(raw, "sequenceLengths")
		b, _ := json.Marshal(raw)
		require.NoError(t, json.Unmarshal(b, &st))
		require.Equal(t, 2, st["isl"].N)        // 10, 20
		require.Equal(t, 3, st["osl"].N)        // 0, 20, 10
		require.Equal(t, 1, st["e2elPerOsl"].N) // only b: 0.4 s / 20
		require.Equal(t, 0.02, st["e2elPerOsl"].P99)
	})
	t.Run("from the server metrics", func(t *testing.T) {
		sm := serverMetricsOf(t, 0, `{"metrics":{
			"vllm:kv_cache_usage_perc":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1,"avg":0.2},{"start_ns":1,"end_ns":2,"avg":0.5},{"start_ns":2,"end_ns":3,"avg":0.8}]}]},
			"vllm:prefix_cache_hits":{"series":[{"timeslices":[{"start_ns":0,"rate":80}]}]},
			"vllm:prefix_cache_queries":{"series":[{"timeslices":[{"start_ns":0,"rate":100}]}]}},
			"warmup_metrics":{"vllm:kv_cache_usage_perc":{"series":[{"timeslices":[{"start_ns":-5,"avg":0.9}]}]}}}`, PointContext{})
		p := profileOf(t, rec{cid: "a", start: 1, end: 2})
		d, err := Derive(p, sm)
		require.NoError(t, err)
		require.JSONEq(t, `{"version":10,"isl":null,"osl":null,"e2elPerOsl":null,
			"kvCacheUtil":{"mean":0.5,"p50":0.5,"p75":0.65,"p90":0.74,"p95":0.77,"p99":0.794,"n":3},
			"prefixCacheHitRate":{"mean":0.8,"p50":0.8,"p75":0.8,"p90":0.8,"p95":0.8,"p99":0.8,"n":1},
			"sequenceLengths":{"isl":null,"osl":null}}`,
			roundJSON(t, d.AggregateStats), "warmup scrapes are not in the statistics")
	})
	t.Run("names read whole and streamed", func(t *testing.T) {
		// An SGLang export: read whole, the statistics fall back to its
		// names; an export above 128 MiB the dashboard streams, keeping
		// only the vLLM cache metrics for the statistics.
		doc := `{"metrics":{
			"sglang:token_usage":{"series":[{"timeslices":[{"start_ns":0,"avg":0.25}]},{"timeslices":[{"start_ns":0,"avg":0.75}]}]},
			"sglang:cached_tokens":{"series":[{"labels":{"cache_source":"device"},"timeslices":[{"start_ns":0,"rate":30}]}]},
			"sglang:prompt_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":120}]}]}}}`
		p := profileOf(t, rec{cid: "a", start: 1, end: 2})
		d, err := Derive(p, serverMetricsOf(t, 0, doc, PointContext{}))
		require.NoError(t, err)
		require.Contains(t, string(d.AggregateStats), `"kvCacheUtil":{"mean":0.5,"p50":0.5,"p75":0.5,"p90":0.5,"p95":0.5,"p99":0.5,"n":1}`)
		require.Contains(t, string(d.AggregateStats), `"prefixCacheHitRate":{"mean":0.25,"p50":0.25,"p75":0.25,"p90":0.25,"p95":0.25,"p99":0.25,"n":1}`)
		d, err = Derive(p, serverMetricsOf(t, inMemoryExportLimit+1, doc, PointContext{}))
		require.NoError(t, err)
		require.Contains(t, string(d.AggregateStats), `"kvCacheUtil":null`)
		require.Contains(t, string(d.AggregateStats), `"prefixCacheHitRate":null`)
	})
	t.Run("ATOM and TensorRT-LLM names", func(t *testing.T) {
		stats := func(size int64, doc string) map[string]*Percentiles {
			t.Helper()
			d, err := Derive(profileOf(t, rec{cid: "a", start: 1, end: 2}), serverMetricsOf(t, size, doc, PointContext{}))
			require.NoError(t, err)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(d.AggregateStats, &raw))
			st := map[string]*Percentiles{}
			for _, k := range []string{"kvCacheUtil", "prefixCacheHitRate"} {
				var p *Percentiles
				require.NoError(t, json.Unmarshal(raw[k], &p))
				st[k] = p
			}
			return st
		}
		// ATOM: its KV ratio; hits over admitted (full) tokens.
		atom := `{"metrics":{"atom:kv_cache_usage_ratio":{"series":[{"timeslices":[{"start_ns":0,"avg":0.4}]}]},
			"atom:prefix_cache_cached_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":30}]}]},
			"atom:prefix_cache_full_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":120}]}]}}}`
		for _, size := range []int64{0, inMemoryExportLimit + 1} {
			st := stats(size, atom)
			require.Equal(t, 0.4, st["kvCacheUtil"].Mean, "size %d", size)
			require.Equal(t, 0.25, st["prefixCacheHitRate"].Mean, "size %d", size)
		}
		// TensorRT-LLM without a query counter: its own hit-rate gauge,
		// averaged over series per start.
		st := stats(0, `{"metrics":{"trtllm_kv_cache_utilization":{"series":[{"timeslices":[{"start_ns":0,"avg":0.5}]}]},
			"trtllm_prompt_cached_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":30}]}]},
			"trtllm_kv_cache_hit_rate":{"series":[{"timeslices":[{"start_ns":0,"avg":0.25},{"start_ns":1,"avg":0.5}]},
				{"timeslices":[{"start_ns":0,"avg":0.75}]}]}}}`)
		require.Equal(t, 0.5, st["kvCacheUtil"].Mean)
		require.Equal(t, &Percentiles{Mean: 0.5, P50: 0.5, P75: 0.5, P90: 0.5, P95: 0.5, P99: 0.5, N: 2}, st["prefixCacheHitRate"])
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// roundJSON rounds every number to 12 decimals, for payloads whose exact
// values carry float noise of the arithmetic (0.65 as 0.6499999999999999).
func roundJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var walk func(any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case float64:
			var f float64
			fmt.Sscanf(fmt.Sprintf("%.12f", y), "%g", &f)
			return f
		case map[string]any:
			for k, e := range y {
				y[k] = walk(e)
			}
		case []any:
			for i, e := range y {
				y[i] = walk(e)
			}
		}
		return x
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}

var nsLiteral = regexp.MustCompile(`"(start_ns|end_ns)":(-?\d+)e9`)

func serverMetricsOf(t *testing.T, size int64, doc string, pc PointContext) *ServerMetrics {
	t.Helper()
	// Timestamps are written as integers, as exports write them.
	doc = nsLiteral.ReplaceAllString(doc, `"$1":${2}000000000`)
	sm, err := ReadServerMetrics(strings.NewReader(doc), size, pc)
	require.NoError(t, err)
	return sm
}

func chartOf(t *testing.T, size int64, doc string) map[string]json.RawMessage {
	t.Helper()
	return chartFor(t, size, doc, PointContext{})
}

// chartFor is the chart series of an export for a point of the given
// context.
func chartFor(t *testing.T, size int64, doc string, pc PointContext) map[string]json.RawMessage {
	t.Helper()
	p := profileOf(t, rec{cid: "a", start: 1, end: 2})
	d, err := Derive(p, serverMetricsOf(t, size, doc, pc))
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(d.ChartSeries, &m))
	return m
}

// vllmExport is a one-second-per-scrape vLLM export covering every charted
// metric, as in the dashboard's chart tests.
func vllmExport(hits, queries float64) string {
	return fmt.Sprintf(`{"metrics":{
		"vllm:kv_cache_usage_perc":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"avg":0.1},{"start_ns":1e9,"end_ns":2e9,"avg":0.4},{"start_ns":2e9,"end_ns":3e9,"avg":0.7}]}]},
		"vllm:prefix_cache_hits":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":%g}]}]},
		"vllm:prefix_cache_queries":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":%g}]}]},
		"vllm:num_requests_running":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"avg":5}]}]},
		"vllm:num_requests_waiting":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"avg":2}]}]},
		"vllm:prompt_tokens":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":1000}]}]},
		"vllm:generation_tokens":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":500}]}]},
		"vllm:prompt_tokens_by_source":{"series":[
			{"labels":{"source":"local_cache_hit"},"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":200}]},
			{"labels":{"source":"miss"},"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":800}]}]}}}`, hits, queries)
}

func TestChartSeriesV20(t *testing.T) {
	t.Run("a vLLM export", func(t *testing.T) {
		c := chartOf(t, 0, vllmExport(75, 100))
		require.JSONEq(t, `20`, string(c["version"]))
		require.JSONEq(t, `[{"t":0,"value":0.1},{"t":1,"value":0.4},{"t":2,"value":0.7}]`, string(c["kvCacheUsage"]))
		require.JSONEq(t, `[{"t":0,"value":0.75}]`, string(c["prefixCacheHitRate"]))
		require.JSONEq(t, `[{"t":0,"running":5,"waiting":2,"total":7}]`, string(c["queueDepth"]))
		require.JSONEq(t, `[{"t":0,"value":1000}]`, string(c["prefillTps"]))
		require.JSONEq(t, `[{"t":0,"value":500}]`, string(c["decodeTps"]))
		require.JSONEq(t, `[{"t":0,"value":75}]`, string(c["prefixCacheHitsTps"]))
		require.JSONEq(t, `{"local_cache_hit":[{"t":0,"value":200}],"miss":[{"t":0,"value":800}]}`, string(c["promptTokensBySource"]))
		// The widest window: the KV usage, 0 → 3e9.
		require.JSONEq(t, `0`, string(c["startNs"]))
		require.JSONEq(t, `3000000000`, string(c["endNs"]))
		require.JSONEq(t, `3`, string(c["durationS"]))
		require.JSONEq(t, `3`, string(c["timeslicesCount"]))
		for _, k := range []string{"hostKvCacheUsage", "kvCacheUsageByEngine", "metricSources"} {
			require.JSONEq(t, `[]`, string(c[k]), k)
		}
		require.Len(t, c, 15, "every field of the dashboard's ChartSeries")
	})
	t.Run("hit rate 80 of 100, none without queries", func(t *testing.T) {
		require.JSONEq(t, `[{"t":0,"value":0.8}]`, string(chartOf(t, 0, vllmExport(80, 100))["prefixCacheHitRate"]))
		require.JSONEq(t, `[]`, string(chartOf(t, 0, vllmExport(5, 0))["prefixCacheHitRate"]))
	})
	t.Run("warmup scrapes before profiling on one axis", func(t *testing.T) {
		c := chartOf(t, 0, `{"warmup_metrics":{"vllm:kv_cache_usage_perc":{"series":[{"timeslices":[
			{"start_ns":0,"end_ns":1e9,"avg":0.2},{"start_ns":1e9,"end_ns":2e9,"avg":0.3}]}]}},
			"metrics":{"vllm:kv_cache_usage_perc":{"series":[{"timeslices":[
			{"start_ns":10e9,"end_ns":11e9,"avg":0.8},{"start_ns":11e9,"end_ns":12e9,"avg":0.9}]}]}}}`)
		require.JSONEq(t, `[{"t":0,"value":0.2},{"t":1,"value":0.3},{"t":10,"value":0.8},{"t":11,"value":0.9}]`, string(c["kvCacheUsage"]))
		// The two blocks' series of one engine (same labels, same
		// endpoint) are one engine: no per-engine lines.
		require.JSONEq(t, `[]`, string(c["kvCacheUsageByEngine"]))
	})
	t.Run("four engines", func(t *testing.T) {
		var run, wait, kv, prompt, gen []string
		for e := 3; e >= 0; e-- { // listed in reverse: the lines follow the engine label
			l := fmt.Sprintf(`"labels":{"engine":"%d"}`, e)
			run = append(run, fmt.Sprintf(`{%s,"timeslices":[{"start_ns":0,"avg":3},{"start_ns":1e9,"avg":4}]}`, l))
			wait = append(wait, fmt.Sprintf(`{%s,"timeslices":[{"start_ns":0,"avg":0},{"start_ns":1e9,"avg":0}]}`, l))
			kv = append(kv, fmt.Sprintf(`{%s,"timeslices":[{"start_ns":0,"avg":0.25},{"start_ns":1e9,"avg":0.5}]}`, l))
			prompt = append(prompt, fmt.Sprintf(`{%s,"timeslices":[{"start_ns":0,"rate":100},{"start_ns":1e9,"rate":200}]}`, l))
			gen = append(gen, fmt.Sprintf(`{%s,"timeslices":[{"start_ns":0,"rate":50},{"start_ns":1e9,"rate":75}]}`, l))
		}
		j := func(s []string) string { return "[" + strings.Join(s, ",") + "]" }
		c := chartOf(t, 0, `{"metrics":{"vllm:num_requests_running":{"series":`+j(run)+`},"vllm:num_requests_waiting":{"series":`+j(wait)+
			`},"vllm:kv_cache_usage_perc":{"series":`+j(kv)+`},"vllm:prompt_tokens":{"series":`+j(prompt)+
			`},"vllm:generation_tokens":{"series":`+j(gen)+`}}}`)
		require.JSONEq(t, `[{"t":0,"running":12,"waiting":0,"total":12},{"t":1,"running":16,"waiting":0,"total":16}]`, string(c["queueDepth"]))
		require.JSONEq(t, `[{"t":0,"value":0.25},{"t":1,"value":0.5}]`, string(c["kvCacheUsage"]))
		require.JSONEq(t, `[{"t":0,"value":400},{"t":1,"value":800}]`, string(c["prefillTps"]))
		require.JSONEq(t, `[{"t":0,"value":200},{"t":1,"value":300}]`, string(c["decodeTps"]))
		var engines []EngineSeries
		require.NoError(t, json.Unmarshal(c["kvCacheUsageByEngine"], &engines))
		require.Len(t, engines, 4)
		for i, e := range engines {
			require.Equal(t, fmt.Sprint(i), e.EngineLabel)
			require.Equal(t, []Point{{0, 0.25}, {1, 0.5}}, e.Points)
		}
		require.JSONEq(t, `[]`, string(c["metricSources"]))
	})
	t.Run("SGLang sources and host KV pool", func(t *testing.T) {
		c := chartOf(t, 0, `{"metrics":{
			"sglang:realtime_tokens":{"series":[{"labels":{"mode":"prefill_compute"},"timeslices":[{"start_ns":0,"rate":70}]},
				{"labels":{"mode":"prefill_cache"},"timeslices":[{"start_ns":0,"rate":999}]},
				{"labels":{"mode":"decode"},"timeslices":[{"start_ns":0,"rate":999}]}]},
			"sglang:cached_tokens":{"series":[{"labels":{"cache_source":"device"},"timeslices":[{"start_ns":0,"rate":20},{"start_ns":1e9,"rate":0}]},
				{"labels":{"cache_source":"host"},"timeslices":[{"start_ns":0,"rate":10}]},
				{"labels":{"cache_source":"total"},"timeslices":[{"start_ns":0,"rate":5}]},
				{"labels":{"cache_source":"disk"},"timeslices":[{"start_ns":0,"rate":1}]},
				{"timeslices":[{"start_ns":0,"rate":2}]}]},
			"sglang:prompt_tokens":{"series":[{"timeslices":[{"start_ns":0,"rate":100}]}]},
			"sglang:hicache_host_used_tokens":{"series":[{"timeslices":[{"start_ns":0,"avg":25},{"start_ns":1e9,"avg":5}]}]},
			"sglang:hicache_host_total_tokens":{"series":[{"timeslices":[{"start_ns":0,"avg":100}]}]}}}`)
		require.JSONEq(t, `{"compute (miss)":[{"t":0,"value":70}],"cache hit (HBM)":[{"t":0,"value":20}],
			"cache hit (CPU offload)":[{"t":0,"value":10}],"cache hit":[{"t":0,"value":5}],"cache hit (disk)":[{"t":0,"value":1}],
			"cache hit (cache hit)":[{"t":0,"value":2}]}`, string(c["promptTokensBySource"]))
		// Σ cached 38 of 100 prompt tokens at t=0; the HBM rate of 0 at
		// t=1 is no prompt-token point.
		require.JSONEq(t, `[{"t":0,"value":0.38}]`, string(c["prefixCacheHitRate"]))
		require.JSONEq(t, `[{"t":0,"value":0.25}]`, string(c["hostKvCacheUsage"]), "no total at t=1: no point")
	})
	t.Run("timing read whole and streamed", func(t *testing.T) {
		// Read whole, every metric times the series; streamed, only the
		// charted ones.
		doc := `{"metrics":{"vllm:iteration_tokens_total":{"series":[{"timeslices":[{"start_ns":-1e9,"end_ns":0},{"start_ns":0,"end_ns":5e9}]}]},
			"vllm:prompt_tokens":{"series":[{"timeslices":[{"start_ns":0,"end_ns":1e9,"rate":10}]}]}}}`
		c := chartOf(t, 0, doc)
		require.JSONEq(t, `-1000000000`, string(c["startNs"]))
		require.JSONEq(t, `5000000000`, string(c["endNs"]))
		require.JSONEq(t, `2`, string(c["timeslicesCount"]))
		require.JSONEq(t, `[{"t":1,"value":10}]`, string(c["prefillTps"]))
		c = chartOf(t, inMemoryExportLimit+1, doc)
		require.JSONEq(t, `0`, string(c["startNs"]))
		require.JSONEq(t, `1000000000`, string(c["endNs"]))
		require.JSONEq(t, `1`, string(c["timeslicesCount"]))
		require.JSONEq(t, `[{"t":0,"value":10}]`, string(c["prefillTps"]))
	})
	t.Run("no server metrics, no chart series", func(t *testing.T) {
		d, err := Derive(profileOf(t, rec{cid: "a", start: 1, end: 2}), nil)
		require.NoError(t, err)
		require.Nil(t, d.ChartSeries)
	})
}

func TestAppendNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1: "1", -2.5: "-2.5", 1e-7: "1e-7", 1e21: "1e+21", 1.5e20: "150000000000000000000",
		1787300000000000123: "1787300000000000000", 1e-6: "0.000001"} {
		require.Equal(t, want, string(appendNum(nil, v)), "%v", v)
	}
	a, b := 0.1, 0.2
	require.Equal(t, "0.30000000000000004", string(appendNum(nil, a+b)))
}
