package trace

import (
	"math"
	"sort"

	"github.com/inferencex/ingest/schema"
)

// Block is a distribution summary. Percentiles interpolate linearly between
// closest ranks (k = (n−1)·p/100); Std is the population deviation.
type Block struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Std  float64 `json:"std"`
}

// Summarize sorts vals in place and summarizes them; nil when empty.
func Summarize(vals []float64) *Block {
	if len(vals) == 0 {
		return nil
	}
	sort.Float64s(vals)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	n := len(vals)
	mean := sum / float64(n)
	var sq float64
	for _, v := range vals {
		sq += (v - mean) * (v - mean)
	}
	return &Block{N: n, Mean: round(mean), Min: round(vals[0]), Max: round(vals[n-1]),
		P50: round(Percentile(vals, 50)), P75: round(Percentile(vals, 75)), P90: round(Percentile(vals, 90)),
		P95: round(Percentile(vals, 95)), P99: round(Percentile(vals, 99)), Std: round(math.Sqrt(sq / float64(n)))}
}

// Percentile of sorted values, linear interpolation between closest ranks.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := float64(len(sorted)-1) * p / 100
	lo := int(math.Floor(k))
	hi := int(math.Ceil(k))
	if lo == hi {
		return sorted[lo]
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(k-float64(lo))
}

// pstdev is the population standard deviation.
func pstdev(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	var sq float64
	for _, v := range vals {
		sq += (v - mean) * (v - mean)
	}
	return math.Sqrt(sq / float64(len(vals)))
}

// round keeps 9 significant decimals so derived payloads are stable across
// platforms and compact.
func round(v float64) float64 {
	if v == 0 || !schema.Finite(v) {
		return 0
	}
	return math.Round(v*1e9) / 1e9
}
