package trace

import (
	"math"

	"github.com/inferencex/ingest/schema"
)

// Token length sketch constants: the layout version and the number of
// linear bins each power-of-two interval [2^e, 2^(e+1)) is cut into, so a
// bin is at most 1/256 of its octave wide. The dashboard merges sketches
// only when both match its own.
const (
	tokenLengthSketchVersion = 1
	tokenLengthBinsPerOctave = 256
)

// TokenLengthSketch is the dashboard's bounded, mergeable histogram of
// token lengths (TokenLengthSketch): sketches of different points add bin
// by bin, so a chart can pool the ISL and OSL distributions of many points
// without their request timelines.
//
// A sample is rounded to the nearest integer (halves up); a length of 0 is
// counted in ZeroCount, a length L ≥ 1 in global bin
// e·256 + ⌊(L − 2^e)/2^e · 256⌋ where e = ⌊log₂ L⌋. Counts is dense from
// MinBin (the lowest occupied bin) to the highest occupied one, empty (not
// null) when every sample is 0, MinBin then 0. N counts every sample taken:
// zeros and binned ones.
type TokenLengthSketch struct {
	Version       int   `json:"version"`
	BinsPerOctave int   `json:"binsPerOctave"`
	N             int   `json:"n"`
	ZeroCount     int   `json:"zeroCount"`
	MinBin        int   `json:"minBin"`
	Counts        []int `json:"counts"`
}

// tokenLengthSketchOf sketches the samples, skipping negative and
// non-finite ones (−0 is a zero); nil when none is left. It does not modify
// or keep samples.
func tokenLengthSketchOf(samples []float64) *TokenLengthSketch {
	s := &TokenLengthSketch{Version: tokenLengthSketchVersion, BinsPerOctave: tokenLengthBinsPerOctave}
	bins := map[int]int{}
	lo, hi := math.MaxInt, math.MinInt
	for _, v := range samples {
		if !schema.Finite(v) || v < 0 {
			continue
		}
		s.N++
		l := roundHalfUp(v)
		if l == 0 {
			s.ZeroCount++
			continue
		}
		b := tokenLengthBin(l)
		bins[b]++
		lo, hi = min(lo, b), max(hi, b)
	}
	if s.N == 0 {
		return nil
	}
	if len(bins) == 0 {
		s.Counts = []int{}
		return s
	}
	s.MinBin = lo
	s.Counts = make([]int, hi-lo+1)
	for b, c := range bins {
		s.Counts[b-lo] = c
	}
	return s
}

// roundHalfUp rounds a finite non-negative value to the nearest integer,
// a half up (JavaScript's Math.round). x − ⌊x⌋ is exact, so a value just
// below a half (0.49999999999999994) stays down, which ⌊x + 0.5⌋ would not.
func roundHalfUp(x float64) float64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return f
}

// tokenLengthBin is the global bin of an integer length l ≥ 1. The octave is
// l's binary exponent, read exactly rather than through a rounded log₂, and
// the offset within it is exact too: l − 2^e and the scalings by powers of
// two round nothing.
func tokenLengthBin(l float64) int {
	_, exp := math.Frexp(l) // l = f·2^exp with f in [0.5, 1)
	e := exp - 1
	base := math.Ldexp(1, e)
	sub := min(tokenLengthBinsPerOctave-1, int(math.Floor((l-base)/base*tokenLengthBinsPerOctave)))
	return e*tokenLengthBinsPerOctave + sub
}
