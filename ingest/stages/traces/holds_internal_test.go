package traces

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHolds: a row is rewritten unless every replaced key is present in
// both with the same value, or absent from both.
func TestHolds(t *testing.T) {
	keys := []string{"a", "published_a", "m"}
	for _, tc := range []struct {
		name        string
		stored, out map[string]float64
		want        bool
	}{
		{"equal", map[string]float64{"a": 1, "m": 1, "other": 5}, map[string]float64{"a": 1, "m": 1}, true},
		{"a value differs", map[string]float64{"a": 1, "m": 1}, map[string]float64{"a": 2, "m": 1}, false},
		{"a key to add", map[string]float64{"m": 1}, map[string]float64{"a": 1, "m": 1}, false},
		{"a key to remove", map[string]float64{"a": 1, "published_a": 3, "m": 1}, map[string]float64{"a": 1, "m": 1}, false},
		{"never derived", map[string]float64{"a": 1}, map[string]float64{"a": 1, "m": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, holds(keys, tc.stored, tc.out))
		})
	}
}
