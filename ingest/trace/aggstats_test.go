package trace

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The expected values below follow by hand from the dashboard's rules for
// the aggregate statistics, version 10 (InferenceX-app: STATS_VERSION 10,
// buildTokenLengthSketch); none was produced by running this package. A
// length L ≥ 1 falls in bin e·256 + ⌊(L − 2^e)/2^e·256⌋, e = ⌊log₂ L⌋.

// sparseCounts is a sketch's dense counts of the given length with the
// given bins (offsets from minBin) set.
func sparseCounts(length int, set map[int]int) []int {
	c := make([]int, length)
	for i, n := range set {
		c[i] = n
	}
	return c
}

func TestTokenLengthSketch(t *testing.T) {
	t.Parallel()
	sk := func(n, zeros, minBin int, counts []int) *TokenLengthSketch {
		return &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: n, ZeroCount: zeros, MinBin: minBin, Counts: counts}
	}
	// 1 ≤ L ≤ 2^20, each once. Octave e < 8 holds 2^e lengths, one every
	// 2^(8−e) bins; octave 8 ≤ e < 20 holds 2^(e−8) lengths in each of its
	// 256 bins; 2^20 alone opens octave 20 (bin 5120).
	var ramp []float64
	for l := 1; l <= 1<<20; l++ {
		ramp = append(ramp, float64(l))
	}
	rampCounts := make([]int, 5121)
	for e := 0; e < 8; e++ {
		for j := 0; j < 1<<e; j++ {
			rampCounts[e*256+j<<(8-e)] = 1
		}
	}
	for e := 8; e < 20; e++ {
		for s := 0; s < 256; s++ {
			rampCounts[e*256+s] = 1 << (e - 8)
		}
	}
	rampCounts[5120] = 1
	// 10 000 each of 0, 1, 7 and 8: bins 0, 2·256 + 192 = 704 (7 is 3/4
	// into [4, 8)) and 3·256 = 768.
	var repeated []float64
	for range 10000 {
		repeated = append(repeated, 0, 1, 7, 8)
	}

	cases := []struct {
		name    string
		samples []float64
		want    *TokenLengthSketch
	}{
		{"no samples", nil, nil},
		{"only negative and non-finite samples", []float64{-1, -0.4, math.NaN(), math.Inf(1), math.Inf(-1)}, nil},
		// Every sample rounds to 0: no bin, counts empty, minBin 0.
		{"zeros", []float64{0, 0, math.Copysign(0, -1), 0.4}, sk(4, 4, 0, []int{})},
		{"one length", []float64{1}, sk(1, 0, 0, []int{1})},
		// 1000 is 488/512 into [512, 1024): bin 9·256 + 244.
		{"one larger length", []float64{1000}, sk(1, 0, 2548, []int{1})},
		// 1024 and 1027 share bin 10·256 (3/1024·256 < 1), 1028 is the next.
		{"lengths sharing a bin", []float64{1027, 1028, 1024}, sk(3, 0, 2560, []int{2, 1})},
		// 255 → 7·256 + 254; 256 → 2048; 257 → 2049; 511 → 8·256 + 255;
		// 512 → 2304.
		{"lengths across octave boundaries", []float64{512, 255, 256, 257, 511},
			sk(5, 0, 2046, sparseCounts(259, map[int]int{0: 1, 2: 1, 3: 1, 257: 1, 258: 1}))},
		// Rounded halves up: 0.5 → 1, 1.49 → 1, 2.5 → 3 (bin 256 + 128),
		// 3.5 → 4 (bin 512); 0.49999999999999994 and −0 are zeros; −3,
		// NaN and ±Inf are not samples.
		{"non-integers and negatives", []float64{0.5, 1.49, 2.5, -3, 3.5, 0.49999999999999994, math.Copysign(0, -1), math.NaN(), math.Inf(1)},
			sk(6, 2, 0, sparseCounts(513, map[int]int{0: 2, 384: 1, 512: 1}))},
		{"many repeats", repeated, sk(40000, 10000, 0, sparseCounts(769, map[int]int{0: 10000, 704: 10000, 768: 10000}))},
		{"every length up to 2^20", ramp, sk(1<<20, 0, 0, rampCounts)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append([]float64(nil), tc.samples...)
			got := tokenLengthSketchOf(in)
			require.Equal(t, tc.want, got)
			require.Equal(t, len(tc.samples), len(in))
			for i := range in {
				require.True(t, in[i] == tc.samples[i] || math.IsNaN(in[i]) && math.IsNaN(tc.samples[i]), "the samples are left as they were")
			}
		})
	}
	t.Run("counts are an empty array, not null", func(t *testing.T) {
		t.Parallel()
		b, err := json.Marshal(tokenLengthSketchOf([]float64{0}))
		require.NoError(t, err)
		require.Equal(t, `{"version":1,"binsPerOctave":256,"n":1,"zeroCount":1,"minBin":0,"counts":[]}`, string(b))
	})
}

func TestPercentilesP95(t *testing.T) {
	t.Parallel()
	var hundred []float64
	for v := 100; v >= 0; v-- {
		hundred = append(hundred, float64(v))
	}
	cases := []struct {
		name    string
		samples []float64
		want    *Percentiles
	}{
		{"none", nil, nil},
		{"one", []float64{7}, &Percentiles{Mean: 7, P50: 7, P75: 7, P90: 7, P95: 7, P99: 7, N: 1}},
		// 0 … 100 descending: every rank 100·q is whole.
		{"0 to 100", hundred, &Percentiles{Mean: 50, P50: 50, P75: 75, P90: 90, P95: 95, P99: 99, N: 101}},
		// Five values: p95 at rank 3.8, 0.8 of the way from 40 to 50;
		// p99 at 3.96; the NaN is no sample.
		{"between ranks", []float64{50, 10, math.NaN(), 40, 20, 30},
			&Percentiles{Mean: 30, P50: 30, P75: 40, P90: 46, P95: 48, P99: 49.6, N: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := percentilesOf(append([]float64(nil), tc.samples...))
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tc.want.N, got.N)
			for _, f := range []struct {
				name      string
				want, got float64
			}{{"mean", tc.want.Mean, got.Mean}, {"p50", tc.want.P50, got.P50}, {"p75", tc.want.P75, got.P75},
				{"p90", tc.want.P90, got.P90}, {"p95", tc.want.P95, got.P95}, {"p99", tc.want.P99, got.P99}} {
				require.InDelta(t, f.want, f.got, 1e-12, f.name)
			}
		})
	}
	t.Run("p95 sits between p90 and p99 in the JSON", func(t *testing.T) {
		t.Parallel()
		b, err := json.Marshal(percentilesOf([]float64{2}))
		require.NoError(t, err)
		require.Equal(t, `{"mean":2,"p50":2,"p75":2,"p90":2,"p95":2,"p99":2,"n":1}`, string(b))
	})
	t.Run("a −0 sample is written 0", func(t *testing.T) {
		t.Parallel()
		negZero := math.Copysign(0, -1)
		b, err := json.Marshal(percentilesOf([]float64{negZero, negZero, negZero}))
		require.NoError(t, err)
		require.Equal(t, `{"mean":0,"p50":0,"p75":0,"p90":0,"p95":0,"p99":0,"n":3}`, string(b))
	})
}

// aggStatsOf reads a profile from JSONL lines and returns its aggregate
// statistics payload without server metrics.
func aggStatsOf(t *testing.T, lines ...string) string {
	t.Helper()
	p, err := ReadProfile(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	require.NoError(t, err)
	raw, err := aggregateStatsJSON(p, nil)
	require.NoError(t, err)
	return string(raw)
}

// aggStatsDoc is the payload decoded, its sketches included.
type aggStatsDoc struct {
	Version         int          `json:"version"`
	ISL             *Percentiles `json:"isl"`
	OSL             *Percentiles `json:"osl"`
	E2ELPerOSL      *Percentiles `json:"e2elPerOsl"`
	SequenceLengths struct {
		ISL *TokenLengthSketch `json:"isl"`
		OSL *TokenLengthSketch `json:"osl"`
	} `json:"sequenceLengths"`
}

func TestAggregateStatsRecordFilter(t *testing.T) {
	t.Parallel()
	raw := aggStatsOf(t,
		// Counted: ISL 100, OSL 10, E2E 1 s / 10 tokens.
		`{"metadata":{"benchmark_phase":"profiling","conversation_id":"a"},"metrics":{"input_sequence_length":{"value":100,"unit":"tokens"},"output_sequence_length":{"value":10,"unit":"tokens"},"request_latency":{"value":1000,"unit":"ms"},"time_to_first_token":{"value":50,"unit":"ms"}}}`,
		// Cancelled: left out whole, error or not.
		`{"metadata":{"benchmark_phase":"profiling","conversation_id":"b","was_cancelled":true},"metrics":{"input_sequence_length":{"value":5000,"unit":"tokens"},"output_sequence_length":{"value":3,"unit":"tokens"},"request_latency":{"value":2000,"unit":"ms"},"time_to_first_token":{"value":10,"unit":"ms"}},"error":{"type":"RequestCancellationError"}}`,
		`{"metadata":{"conversation_id":"b2","was_cancelled":true},"metrics":{"input_sequence_length":4000}}`,
		// was_cancelled false, no phase, bare numbers: ISL 300 and OSL 0
		// count; OSL 0 gives no E2E ratio.
		`{"metadata":{"conversation_id":"c","was_cancelled":false},"metrics":{"input_sequence_length":300,"output_sequence_length":0,"request_latency":900,"time_to_first_token":30}}`,
		// was_cancelled null and an empty phase count; an error counts.
		`{"metadata":{"benchmark_phase":"","conversation_id":"d","was_cancelled":null},"metrics":{"input_sequence_length":200,"output_sequence_length":20,"request_latency":4000,"time_to_first_token":100},"error":{"type":"HTTPStatusError"}}`,
		// Another phase: left out.
		`{"metadata":{"benchmark_phase":"warmup","conversation_id":"w"},"metrics":{"input_sequence_length":7,"output_sequence_length":7,"request_latency":70,"time_to_first_token":7}}`)
	var d aggStatsDoc
	require.NoError(t, json.Unmarshal([]byte(raw), &d))
	require.Equal(t, 10, d.Version)
	// ISL 100, 300, 200; OSL 10, 0, 20; E2E 0.1 and 0.2 s per token.
	require.Equal(t, &Percentiles{Mean: 200, P50: 200, P75: 250, P90: 280, P95: 290, P99: 298, N: 3}, d.ISL)
	require.Equal(t, 3, d.OSL.N)
	require.Equal(t, 10.0, d.OSL.Mean)
	require.Equal(t, 2, d.E2ELPerOSL.N)
	require.InDelta(t, 0.15, d.E2ELPerOSL.Mean, 1e-15)
	require.InDelta(t, 0.195, d.E2ELPerOSL.P95, 1e-15)
	// ISL 100 → 6·256 + 144, 200 → 7·256 + 144, 300 → 8·256 + 44.
	require.Equal(t, &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: 3, MinBin: 1680,
		Counts: sparseCounts(413, map[int]int{0: 1, 256: 1, 412: 1})}, d.SequenceLengths.ISL)
	// OSL 0 is a zero; 10 → 3·256 + 64, 20 → 4·256 + 64.
	require.Equal(t, &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: 3, ZeroCount: 1, MinBin: 832,
		Counts: sparseCounts(257, map[int]int{0: 1, 256: 1})}, d.SequenceLengths.OSL)
}

func TestAggregateStatsV10Shape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"one request",
			[]string{`{"metadata":{"conversation_id":"a"},"metrics":{"input_sequence_length":1000,"output_sequence_length":{"value":1,"unit":"tokens"},"request_latency":500,"time_to_first_token":100}}`},
			`{"version":10,` +
				`"isl":{"mean":1000,"p50":1000,"p75":1000,"p90":1000,"p95":1000,"p99":1000,"n":1},` +
				`"osl":{"mean":1,"p50":1,"p75":1,"p90":1,"p95":1,"p99":1,"n":1},` +
				`"kvCacheUtil":null,"prefixCacheHitRate":null,` +
				`"e2elPerOsl":{"mean":0.5,"p50":0.5,"p75":0.5,"p90":0.5,"p95":0.5,"p99":0.5,"n":1},` +
				`"sequenceLengths":{` +
				`"isl":{"version":1,"binsPerOctave":256,"n":1,"zeroCount":0,"minBin":2548,"counts":[1]},` +
				`"osl":{"version":1,"binsPerOctave":256,"n":1,"zeroCount":0,"minBin":0,"counts":[1]}}}`},
		{"no lengths",
			[]string{`{"metadata":{"conversation_id":"a","request_start_ns":1,"request_end_ns":2}}`},
			`{"version":10,"isl":null,"osl":null,"kvCacheUtil":null,"prefixCacheHitRate":null,"e2elPerOsl":null,` +
				`"sequenceLengths":{"isl":null,"osl":null}}`},
		// A negative length is a percentile sample but no sketch sample;
		// a fractional one is both, rounded only in the sketch.
		{"negative and fractional lengths",
			[]string{`{"metadata":{"conversation_id":"a"},"metrics":{"input_sequence_length":-5,"output_sequence_length":2.5}}`},
			`{"version":10,` +
				`"isl":{"mean":-5,"p50":-5,"p75":-5,"p90":-5,"p95":-5,"p99":-5,"n":1},` +
				`"osl":{"mean":2.5,"p50":2.5,"p75":2.5,"p90":2.5,"p95":2.5,"p99":2.5,"n":1},` +
				`"kvCacheUtil":null,"prefixCacheHitRate":null,"e2elPerOsl":null,` +
				`"sequenceLengths":{"isl":null,` +
				`"osl":{"version":1,"binsPerOctave":256,"n":1,"zeroCount":0,"minBin":384,"counts":[1]}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, aggStatsOf(t, tc.lines...))
		})
	}
	t.Run("the sketches see every sample the percentiles see", func(t *testing.T) {
		t.Parallel()
		// percentilesOf compacts and sorts its slice in place: with a NaN
		// among the samples, sketching after it would count 3 twice.
		p := &Profile{stats: statSamples{isl: []float64{math.NaN(), 3, 1}}}
		raw, err := aggregateStatsJSON(p, nil)
		require.NoError(t, err)
		var d aggStatsDoc
		require.NoError(t, json.Unmarshal(raw, &d))
		require.Equal(t, 2, d.ISL.N)
		require.Equal(t, &TokenLengthSketch{Version: 1, BinsPerOctave: 256, N: 2, MinBin: 0,
			Counts: sparseCounts(385, map[int]int{0: 1, 384: 1})}, d.SequenceLengths.ISL)
		require.Nil(t, d.SequenceLengths.OSL)
	})
}
