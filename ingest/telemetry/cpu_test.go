package telemetry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadCPUSamples: the two generations of the CPU-side samples the
// producer accepts, and what it refuses (each naming its line).
func TestReadCPUSamples(t *testing.T) {
	v1 := "schema_version,timestamp_unix,hostname,source,sensor,socket_id,power_w,total_power_w\n"
	v2 := "schema_version,timestamp_unix,hostname,source,sensor,socket_id,power_w,cpu_rail_w,soc_w,dram_w,total_power_w\n"
	cases := []struct {
		name, body string
		want       CPUSamples
		err        string
	}{
		{"v1 long", v1 +
			"1,1790360712.25,gb200-1,acpi,Grace Power Socket 0,0,251.5,1002.0\n" +
			"1,1790360712.25,gb200-1,acpi,Grace Power Socket 1,1,248.25,1002.0\n" +
			"1,1790360712.25,gb200-1,dcgm,CPU0:cpuPowerUsageW,0,240.0,1002.0\n" +
			"1,1790360713.25,gb200-1,acpi,Grace Power Socket 0,0,252.5,1004.0\n",
			CPUSamples{Version: 1, Rows: 4, Sockets: 2}, ""},
		{"v2 wide", v2 +
			"2,1790360712.25,gb200-1,acpi,Grace Power Socket 0,0,251.5,180.25,60.5,,1002.0\n" +
			"2,1790360712.25,gb200-1,acpi,Grace Power Socket 1,1,248.25,,,,1002.0\n" +
			"2,1790360712.25,gb200-2,acpi,Grace Power Socket 0,0,250,181,61,,990\n",
			CPUSamples{Version: 2, Rows: 3, Sockets: 3}, ""},
		{"header only", v2, CPUSamples{Version: 2}, ""},
		{"empty", "", CPUSamples{}, "empty CPU samples file"},
		{"gpu header", "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n", CPUSamples{}, "line 1: not a CPU samples header"},
		{"version mismatch", v1 + "2,1790360712.25,gb200-1,acpi,Grace Power Socket 0,0,251.5,1002.0\n", CPUSamples{Version: 1}, "line 2: schema_version"},
		{"negative power", v1 + "1,1790360712.25,gb200-1,acpi,Grace Power Socket 0,0,-1,1002.0\n", CPUSamples{Version: 1}, "line 2: invalid power_w"},
		{"bad rail", v2 + "2,1790360712.25,gb200-1,acpi,Grace Power Socket 0,0,251.5,x,60.5,,1002.0\n", CPUSamples{Version: 2}, "line 2: invalid cpu_rail_w"},
		{"ragged", v1 + "1,1790360712.25,gb200-1,acpi\n", CPUSamples{Version: 1}, "line 2: row has 4 fields, the header 8"},
		{"no host", v1 + "1,1790360712.25,,acpi,Grace Power Socket 0,0,251.5,1002.0\n", CPUSamples{Version: 1}, "line 2: empty hostname"},
		{"bad socket", v1 + "1,1790360712.25,h,acpi,Grace Power Socket 0,-1,251.5,1002.0\n", CPUSamples{Version: 1}, "line 2: invalid socket_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadCPUSamples(strings.NewReader(c.body))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}
