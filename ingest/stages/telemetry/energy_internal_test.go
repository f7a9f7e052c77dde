package telemetry

import (
	"testing"
	"testing/fstest"

	"github.com/inferencex/ingest/ingest/source"
)

// The AMD energy accumulators are summed in GPU order: 500 calls on the
// same files give one sum (in map order they gave two).
func TestAMDEnergyDeltaIsDeterministic(t *testing.T) {
	start := "gpu,energy_j\n0,1000000.1\n1,2000000.2\n2,3000000.3\n3,4000000.7\n4,123.456\n5,0.1\n6,0.2\n7,0.3\n"
	end := "gpu,energy_j\n0,1234567.3\n1,2345678.9\n2,3456789.1\n3,4567890.3\n4,98765.4321\n5,0.3\n6,0.5\n7,0.9\n"
	fsys := fstest.MapFS{
		"gpu_metrics_energy_start.csv": {Data: []byte(start)},
		"gpu_metrics_energy_end.csv":   {Data: []byte(end)},
	}
	a := &source.Artifact{Name: "gpu_metrics_x", Files: []string{"gpu_metrics.csv", "gpu_metrics_energy_end.csv", "gpu_metrics_energy_start.csv"}}
	seen := map[float64]int{}
	for range 500 {
		v, ok := amdEnergyDelta(a, fsys, "gpu_metrics.csv")
		if !ok {
			t.Fatal("no delta")
		}
		seen[v]++
	}
	if len(seen) > 1 {
		t.Errorf("amdEnergyDelta is not deterministic: %d distinct sums %v", len(seen), seen)
	}
}
