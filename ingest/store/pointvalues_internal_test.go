package store

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImpactValues: the five values the stager reads are those the stored
// document holds as numbers; what the encoder does not write as a number
// is no value, and a type it writes through encoding/json is left to the
// database.
func TestImpactValues(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct {
		name  string
		m     map[string]any
		want  [5]any
		known bool
	}{
		{"none", nil, [5]any{}, true},
		{"all five", map[string]any{"tput_per_gpu": 1.5, "output_tput_per_gpu": 2.0, "median_intvty": 3e21,
			"p90_e2el": 5e-324, "median_ttft": 0.1 + 0.2, "other": "x"}, [5]any{1.5, 2.0, 3e21, 5e-324, 0.1 + 0.2}, true},
		{"not numbers", map[string]any{"tput_per_gpu": "n/a", "output_tput_per_gpu": true, "median_intvty": nil,
			"p90_e2el": map[string]any{"v": 1.0}, "median_ttft": []any{1.0}}, [5]any{}, true},
		{"written as null", map[string]any{"tput_per_gpu": math.NaN(), "median_ttft": math.Inf(-1)}, [5]any{}, true},
		{"zero has no sign", map[string]any{"tput_per_gpu": negZero}, [5]any{0.0}, true},
		{"an integer", map[string]any{"tput_per_gpu": 1.0, "median_ttft": 7}, [5]any{}, false},
		{"a json.Number", map[string]any{"p90_e2el": json.Number("12.50")}, [5]any{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, known := impactValues(tc.m)
			require.Equal(t, tc.known, known)
			require.Equal(t, tc.want, got)
			if f, ok := got[0].(float64); ok && f == 0 {
				require.False(t, math.Signbit(f), "no negative zero")
			}
		})
	}
}
