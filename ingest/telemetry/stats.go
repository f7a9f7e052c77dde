package telemetry

import (
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// StatsVersion is the version of the per-GPU digest (GPUStat) stored with a
// series: the reference's GPU_STATS_VERSION whose definitions Stats follows.
const StatsVersion = 1

// GPUStat is the digest of one metric of one GPU of a series, over every
// sample with a value: count, min, max, mean, median, p95, p99 (linear
// interpolation at p·(n−1) of the sorted values) and the population
// standard deviation — the reference's gpu_metric_gpu_stats row.
type GPUStat struct {
	GPU    int16
	Metric int // MetricPower …
	Count  int
	Min    float64
	Max    float64
	Mean   float64
	Median float64
	P95    float64
	P99    float64
	Stddev float64
}

// computeStats digests the series' batches (each holds one GPU's samples),
// GPU by GPU (ascending), each GPU's metrics in the order of their names
// (the reference sorts by metric name).
//
// The reference digests the values as parsed from the CSV text (float64);
// the batches hold float32. A value written with at most six significant
// digits is recovered exactly from its float32 (the shortest decimal that
// reads back as that float32 is the written one), so the digest equals the
// reference's for every such value; the sums run over the sorted values,
// in the reference's order.
func computeStats(s *Series) []GPUStat {
	byGPU := map[int16][]int{}
	var gpus []int16
	for i, b := range s.Batches {
		if b.NumRows() == 0 {
			continue
		}
		g := b.Column(ColGPU).(*array.Int16).Value(0)
		if _, ok := byGPU[g]; !ok {
			gpus = append(gpus, g)
		}
		byGPU[g] = append(byGPU[g], i)
	}
	slices.Sort(gpus)
	var out []GPUStat
	var vals []float32
	var exact []float64
	var keys [2][]uint32
	for _, g := range gpus {
		for _, m := range metricsByName {
			vals = vals[:0]
			for _, bi := range byGPU[g] {
				col := s.Batches[bi].Column(ColMetrics + m).(*array.Float32)
				if col.NullN() == col.Len() {
					continue
				}
				if col.NullN() == 0 {
					vals = append(vals, col.Float32Values()...)
					continue
				}
				for k := 0; k < col.Len(); k++ {
					if col.IsValid(k) {
						vals = append(vals, col.Value(k))
					}
				}
			}
			if len(vals) == 0 {
				continue
			}
			keys = sortFloat32(vals, keys)
			exact = decimalValues(vals, exact[:0])
			out = append(out, digest(g, m, exact))
		}
	}
	return out
}

// metricsByName lists the metrics in the order of their names.
var metricsByName = func() []int {
	idx := make([]int, NumMetrics)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case MetricNames[a] < MetricNames[b]:
			return -1
		case MetricNames[a] > MetricNames[b]:
			return 1
		}
		return 0
	})
	return idx
}()

// decimalValues appends the float64 of the shortest decimal of each sorted
// float32 (equal neighbours are converted once).
func decimalValues(sorted []float32, out []float64) []float64 {
	var last float32
	var lastExact float64
	for i, v := range sorted {
		if i == 0 || v != last {
			last = v
			lastExact, _ = strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
		}
		out = append(out, lastExact)
	}
	return out
}

// digest of one GPU's sorted values of one metric.
func digest(gpu int16, metric int, sorted []float64) GPUStat {
	n := len(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(n)
	var sq float64
	for _, v := range sorted {
		d := v - mean
		sq += d * d
	}
	return GPUStat{GPU: gpu, Metric: metric, Count: n, Min: sorted[0], Max: sorted[n-1], Mean: mean,
		Median: interpolated(sorted, 50), P95: interpolated(sorted, 95), P99: interpolated(sorted, 99),
		Stddev: math.Sqrt(sq / float64(n))}
}

// interpolated is the p-th percentile of sorted values, linear between the
// neighbours of p/100·(n−1).
func interpolated(sorted []float64, p float64) float64 {
	idx := p / 100 * float64(len(sorted)-1)
	lo, hi := int(math.Floor(idx)), int(math.Ceil(idx))
	if lo == hi {
		return sorted[lo]
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(idx-float64(lo))
}

// sortFloat32 sorts finite values ascending: a radix sort of their
// order-preserving bit patterns (three 11-bit passes) for all but short
// slices. The digest sorts every metric of every GPU, where a comparison
// sort is a visible share of the parse. keys is scratch,
// returned for reuse.
func sortFloat32(v []float32, keys [2][]uint32) [2][]uint32 {
	if len(v) < 256 {
		slices.Sort(v)
		return keys
	}
	a, b := keys[0][:0], keys[1]
	for _, x := range v {
		u := math.Float32bits(x)
		if u&(1<<31) != 0 {
			u = ^u
		} else {
			u |= 1 << 31
		}
		a = append(a, u)
	}
	if cap(b) < len(a) {
		b = make([]uint32, len(a))
	}
	b = b[:len(a)]
	var count [1 << 11]int
	for shift := uint(0); shift < 33; shift += 11 {
		clear(count[:])
		for _, u := range a {
			count[(u>>shift)&(1<<11-1)]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, u := range a {
			d := (u >> shift) & (1<<11 - 1)
			b[count[d]] = u
			count[d]++
		}
		a, b = b, a
	}
	for i, u := range a {
		if u&(1<<31) != 0 {
			u &^= 1 << 31
		} else {
			u = ^u
		}
		v[i] = math.Float32frombits(u)
	}
	return [2][]uint32{a, b}
}
