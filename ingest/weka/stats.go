package weka

import (
	"math"
	"slices"
)

// Bin is one bar of a histogram: [X0, X1) and how many values fell in it.
type Bin struct {
	X0    float64 `json:"x0"`
	X1    float64 `json:"x1"`
	Count int     `json:"count"`
}

// Summary is a distribution's summary; percentiles interpolate linearly
// between closest ranks, the mean sums the sorted values. All zero when
// there are no values.
type Summary struct {
	Count  int     `json:"count"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
}

func summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	q := func(p float64) float64 {
		pos := float64(len(sorted)-1) * p
		lo, hi := math.Floor(pos), math.Ceil(pos)
		if lo == hi {
			return sorted[int(lo)]
		}
		return sorted[int(lo)] + (sorted[int(hi)]-sorted[int(lo)])*(pos-lo)
	}
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	return Summary{Count: len(sorted), Min: sorted[0], Max: sorted[len(sorted)-1], Mean: sum / float64(len(sorted)),
		Median: q(0.5), P75: q(0.75), P90: q(0.9), P95: q(0.95)}
}

// linearHistogram has bins of equal width over [0, max]; one bin [0, 1)
// when no value is above 0.
func linearHistogram(values []float64, bins int) []Bin {
	if len(values) == 0 {
		return []Bin{}
	}
	top := slices.Max(values)
	if top <= 0 {
		return []Bin{{X0: 0, X1: 1, Count: len(values)}}
	}
	width := top / float64(bins)
	out := make([]Bin, bins)
	for i := range out {
		out[i] = Bin{X0: float64(i) * width, X1: float64(i+1) * width}
	}
	for _, v := range values {
		out[min(bins-1, max(0, int(math.Floor(v/width))))].Count++
	}
	return out
}

// logHistogram has bins of equal width in log10 over the values above 0
// (the others are left out).
func logHistogram(values []float64, bins int) []Bin {
	var pos []float64
	for _, v := range values {
		if v > 0 {
			pos = append(pos, v)
		}
	}
	if len(pos) == 0 {
		return []Bin{}
	}
	lowest, highest := slices.Min(pos), slices.Max(pos)
	lo, hi := math.Log10(lowest), math.Log10(highest)
	if hi <= lo {
		x1 := highest
		if highest <= lowest {
			x1 = lowest * 10
		}
		return []Bin{{X0: lowest, X1: x1, Count: len(pos)}}
	}
	width := (hi - lo) / float64(bins)
	out := make([]Bin, bins)
	for i := range out {
		out[i] = Bin{X0: math.Pow(10, lo+float64(i)*width), X1: math.Pow(10, lo+float64(i+1)*width)}
	}
	for _, v := range pos {
		out[min(bins-1, max(0, int(math.Floor((math.Log10(v)-lo)/width))))].Count++
	}
	return out
}

// logHistogramWithZero is logHistogram with the zeros counted in a first
// bin [0, the first bin's start).
func logHistogramWithZero(values []float64, bins int) []Bin {
	zeros := 0
	var pos []float64
	for _, v := range values {
		switch {
		case v == 0:
			zeros++
		case v > 0:
			pos = append(pos, v)
		}
	}
	if zeros == 0 {
		return logHistogram(pos, bins)
	}
	if len(pos) == 0 {
		return []Bin{{X0: 0, X1: 1, Count: zeros}}
	}
	rest := logHistogram(pos, max(1, bins-1))
	return append([]Bin{{X0: 0, X1: rest[0].X0, Count: zeros}}, rest...)
}
