package benchmark

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// cpuSidePower are the five Grace CPU-side and compute-module keys of the
// producer's contract, with values a row carries.
var cpuSidePower = map[string]float64{
	"avg_cpu_socket_power_w":   250.5,
	"avg_total_cpu_power_w":    501,
	"total_cpu_energy_j":       30060,
	"avg_total_module_power_w": 4300.75,
	"total_module_energy_j":    258045,
}

// TestCPUSidePowerContract: the CPU-side keys are stored as the row gives
// them whatever its CPU verdict says — absent, 0, 1 or "1" — with the
// verdict normalized beside them for readers to judge (production stores
// them so; its readers check cpu_power_valid). Only an invalid GPU power
// verdict (power_valid 0) withholds them, with every other measured key.
func TestCPUSidePowerContract(t *testing.T) {
	t.Parallel()
	n := newTestNormalizer(t)
	cases := []struct {
		name       string
		powerValid string // a JSON literal; "": absent
		cpuValid   string // a JSON literal; "": absent
		wantCPU    any    // the stored cpu_power_valid (nil: absent)
		kept       bool
	}{
		{"no cpu verdict", "1", "", nil, true},
		{"cpu verdict 0", "1", "0", 0.0, true},
		{"cpu verdict 1", "1", "1", 1.0, true},
		{"cpu verdict string 1", "1", `"1"`, 1.0, true},
		{"cpu verdict 1, no power verdict", "", "1", 1.0, true},
		{"power verdict 0", "0", "1", 1.0, false},
		{"power verdict 0, no cpu verdict", "0", "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mods := []mod{set("power_metric_schema_version", "2"), set("avg_power_w", "900.25")}
			if c.powerValid != "" {
				mods = append(mods, set("power_valid", c.powerValid))
			}
			if c.cpuValid != "" {
				mods = append(mods, set("cpu_power_valid", c.cpuValid))
			}
			for k, v := range cpuSidePower {
				mods = append(mods, set(k, strconv.FormatFloat(v, 'f', -1, 64)))
			}
			p, o := n.Normalize(build(t, v1Base, mods...))
			requireOK(t, o)
			if c.wantCPU == nil {
				require.NotContains(t, p.Metrics, "cpu_power_valid")
			} else {
				require.Equal(t, c.wantCPU, p.Metrics["cpu_power_valid"])
			}
			for k, v := range cpuSidePower {
				if c.kept {
					require.Equal(t, v, p.Metrics[k], k)
				} else {
					require.NotContains(t, p.Metrics, k)
				}
			}
		})
	}
}
