package telemetry

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// TestStatsDigest states the reference's digest on a small nvidia-smi file:
// per GPU and metric over the non-null values, linear percentiles at
// p/100·(n−1), population standard deviation, values as written (400.1,
// not the float32 nearest to it); a repeated (GPU, time) row and a row
// without power are not samples.
func TestStatsDigest(t *testing.T) {
	csv := strings.Join([]string{
		"timestamp, index, power.draw [W], temperature.gpu, utilization.gpu [%]",
		"2026/09/11 04:19:41.000, 0, 300.75 W, 33, [N/A]",
		"2026/09/11 04:19:41.000, 1, 50.00 W, 40, 7 %",
		"2026/09/11 04:19:42.000, 0, 100.50 W, 35, [N/A]",
		"2026/09/11 04:19:43.000, 0, 400.10 W, 36, [N/A]",
		"2026/09/11 04:19:43.000, 0, 999.00 W, 99, [N/A]", // repeated (GPU, time): first wins
		"2026/09/11 04:19:44.000, 0, 200.25 W, 34, [N/A]",
		"2026/09/11 04:19:45.000, 0, [N/A], 34, [N/A]", // no power: no sample
	}, "\n")
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	series, err := Parse(strings.NewReader(csv), Options{Mem: mem})
	require.NoError(t, err)
	defer func() { ReleaseAll(series); mem.AssertSize(t, 0) }()
	require.Len(t, series, 1)
	type row struct {
		gpu    int16
		metric string
		n      int
		min    float64
		max    float64
		mean   float64
		median float64
		p95    float64
		p99    float64
		stddev float64
	}
	var got []row
	for _, s := range series[0].Stats {
		got = append(got, row{s.GPU, MetricNames[s.Metric], s.Count, s.Min, s.Max, s.Mean, s.Median, s.P95, s.P99, s.Stddev})
	}
	// GPU 0 power sorted: 100.5 200.25 300.75 400.1
	powerSD := math.Sqrt((149.9*149.9 + 50.15*50.15 + 50.35*50.35 + 149.7*149.7) / 4)
	tempSD := math.Sqrt((1.5*1.5 + 0.5*0.5 + 0.5*0.5 + 1.5*1.5) / 4)
	want := []row{
		{0, "power_w", 4, 100.5, 400.1, 250.4, 250.5, 300.75 + 99.35*0.85, 300.75 + 99.35*0.97, powerSD},
		{0, "temperature_c", 4, 33, 36, 34.5, 34.5, 35 + 0.85, 35 + 0.97, tempSD},
		{1, "gpu_util_pct", 1, 7, 7, 7, 7, 7, 7, 0},
		{1, "power_w", 1, 50, 50, 50, 50, 50, 50, 0},
		{1, "temperature_c", 1, 40, 40, 40, 40, 40, 40, 0},
	}
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, []any{w.gpu, w.metric, w.n}, []any{g.gpu, g.metric, g.n}, "row %d", i)
		for k, pair := range [][2]float64{{w.min, g.min}, {w.max, g.max}, {w.mean, g.mean}, {w.median, g.median},
			{w.p95, g.p95}, {w.p99, g.p99}, {w.stddev, g.stddev}} {
			require.InDelta(t, pair[0], pair[1], 1e-9, "row %d (%s) value %d", i, w.metric, k)
		}
	}
	// The written decimals, not their float32 neighbours.
	require.Equal(t, 400.1, got[0].max)
	require.Equal(t, 100.5, got[0].min)
}

// TestDecimalValues: a float32 read from a decimal of at most six
// significant digits gives back that decimal's float64.
func TestDecimalValues(t *testing.T) {
	for _, d := range []float64{187.8, 190.96, 912.1, 186.656, 0.1, 1234.5, 99999.9, 0.000123456} {
		got := decimalValues([]float32{float32(d)}, nil)
		require.Equal(t, d, got[0])
	}
}

// TestSortFloat32 agrees with a comparison sort, negatives and zeros
// included, on short and long slices.
func TestSortFloat32(t *testing.T) {
	for _, n := range []int{0, 1, 7, 255, 256, 1000, 5000} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*7919)%1013-500) / 8
		}
		want := slices.Clone(v)
		slices.Sort(want)
		sortFloat32(v, [2][]uint32{})
		require.Equal(t, want, v, "n=%d", n)
	}
}
