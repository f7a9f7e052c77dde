package trace

import (
	"math"
	"slices"
	"strconv"

	"github.com/inferencex/ingest/schema"
)

// Percentiles is the dashboard's distribution summary of one metric
// (MetricPercentiles): the mean and linear-interpolated percentiles of the
// finite samples, and their count.
type Percentiles struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	N    int     `json:"n"`
}

// percentilesOf summarizes the finite samples (mean, p50, p75, p90, p95,
// p99, n); nil when there are none. The mean sums the sorted samples in
// ascending order, the percentiles interpolate between closest ranks at
// (n−1)·q (numpy's default), values unrounded: the numbers are the
// dashboard's to the bit. It works in vals: afterwards the finite samples
// are sorted at its front, so when any was not finite vals no longer holds
// the samples it was given.
func percentilesOf(vals []float64) *Percentiles {
	clean := vals[:0]
	for _, v := range vals {
		if schema.Finite(v) {
			// +0 turns −0 into 0: a percentile that is a −0 sample is
			// written 0, as JSON.stringify writes it, not -0.
			clean = append(clean, v+0)
		}
	}
	if len(clean) == 0 {
		return nil
	}
	slices.Sort(clean)
	sum := 0.0
	for _, v := range clean {
		sum += v
	}
	return &Percentiles{Mean: sum / float64(len(clean)), P50: quantile(clean, 0.5), P75: quantile(clean, 0.75),
		P90: quantile(clean, 0.9), P95: quantile(clean, 0.95), P99: quantile(clean, 0.99), N: len(clean)}
}

// quantile of ascending values: linear interpolation at (n−1)·q.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := float64(len(sorted)-1) * q
	lo, hi := math.Floor(pos), math.Ceil(pos)
	if lo == hi {
		return sorted[int(lo)]
	}
	a, b := sorted[int(lo)], sorted[int(hi)]
	return a + (b-a)*(pos-lo)
}

// appendNum writes a float64 as JSON the way JavaScript prints it: the
// shortest decimal that reads back to the same float64, plain from 1e-6 up
// to 1e21, an exponent outside; a non-finite value is null (as
// JSON.stringify writes it).
func appendNum(b []byte, f float64) []byte {
	if !schema.Finite(f) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0') // also −0
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// 1e-07 → 1e-7, as JavaScript writes it.
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
