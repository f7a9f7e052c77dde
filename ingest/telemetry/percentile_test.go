package telemetry

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedPercentile is the definition: sort, then interpolate at p·(N−1).
func sortedPercentile(values []float32, p float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	pos := p * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	frac := pos - float64(lo)
	return float64(s[lo]) + (float64(s[hi])-float64(s[lo]))*frac
}

// TestPercentileMatchesSort: selection gives what sorting gives, for
// sizes from 1, with many repeated values, sorted and reversed input, and
// the same slice used for several percentiles in turn.
func TestPercentileMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(n int) []float32{
		"random": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = r.Float32() * 1000
			}
			return v
		},
		"few values": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.IntN(3)) * 100
			}
			return v
		},
		"ascending": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i)
			}
			return v
		},
		"descending": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(n - i)
			}
			return v
		},
	}
	for name, shape := range shapes {
		for n := 1; n <= 300; n += 1 + n/10 {
			v := shape(n)
			orig := slices.Clone(v)
			for _, p := range []float64{0.5, 0.9, 0, 1, 0.25, 0.99} {
				want := sortedPercentile(orig, p)
				if got := percentile(v, p); got != want {
					t.Fatalf("%s n=%d p=%v: got %v, want %v", name, n, p, got, want)
				}
			}
			slices.Sort(v)
			slices.Sort(orig)
			if !slices.Equal(v, orig) {
				t.Fatalf("%s n=%d: percentile lost or changed values", name, n)
			}
		}
	}
}
