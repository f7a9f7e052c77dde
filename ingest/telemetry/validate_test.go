package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

const (
	nvHeader   = "timestamp, index, power.draw [W], temperature.gpu\n"
	amdHeader  = "timestamp,gpu,socket_power,edge\n"
	dcgmHeader = "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n"
)

// parseString parses an inline CSV with a leak-checked allocator.
func parseString(t *testing.T, csv string, opt Options) ([]*Series, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	opt.Mem = mem
	if opt.Chunk == 0 {
		opt.Chunk = 2 // several batches: checks span batch boundaries
	}
	return Parse(strings.NewReader(csv), opt)
}

// Bad input the review found stored as rows (impossible power, timestamps
// from another day or year, a hostname PostgreSQL cannot store, a column
// named twice): every case fails the whole file with a ParseError naming
// the line, and yields no series.
func TestParseRejectsImpossibleInput(t *testing.T) {
	notAfter := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).UnixMicro()
	cases := []struct {
		name, csv, want string
	}{
		// power
		{"nvidia negative power", nvHeader +
			"2026/08/21 08:01:40.250, 0, 146.72 W, 35\n2026/08/21 08:01:41.250, 0, -860.13 W, 35\n",
			"line 3: impossible power -860.13 W (negative)"},
		{"nvidia huge power", nvHeader +
			"2026/08/21 08:01:40.250, 0, 146.72 W, 35\n2026/08/21 08:01:41.250, 0, 1e30 W, 35\n",
			"line 3: impossible power 1e+30 W (above the 5000 W bound per GPU)"},
		{"nvidia NaN power", nvHeader + "2026/08/21 08:01:40.250, 0, NaN W, 35\n", `line 2: non-finite power "NaN W"`},
		{"nvidia Inf power", nvHeader + "2026/08/21 08:01:40.250, 0, +Inf, 35\n", `line 2: non-finite power "+Inf"`},
		{"nvidia overflowing power", nvHeader + "2026/08/21 08:01:40.250, 0, 1e400 W, 35\n", `line 2: non-finite power "1e400 W"`},
		{"amd NaN power", amdHeader + "1787300000,0,1000,40\n1787300001,0,NaN,40\n", "line 3: non-finite power NaN"},
		{"amd negative power", amdHeader + "1787300000,0,-1,40\n", "line 2: impossible power -1 W (negative)"},
		{"amd huge power", amdHeader + "1787300000,0,5000.5,40\n", "line 2: impossible power 5000.5 W (above"},
		{"dcgm NaN power", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,NaN\n", "line 2: non-finite power NaN"},
		{"dcgm Inf power", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,400\n1,1787300001.0,1,node-p,0,GPU-a,-Inf\n", "line 3: non-finite power -Inf"},
		{"dcgm negative power", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,-860.13\n", "line 2: impossible power -860.13 W (negative)"},
		{"dcgm huge power", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,1e30\n", "line 2: impossible power 1e+30 W"},
		// other metrics: a value a real (float32) column cannot hold as
		// written fails the line, never stored as ±Infinity or null
		{"nvidia temperature beyond float32", nvHeader + "2026/08/21 08:01:40.250, 0, 100 W, 35\n2026/08/21 08:01:41.250, 0, 100 W, 1e308\n",
			"line 3: field temperature.gpu out of range (1e308)"},
		{"nvidia temperature just beyond float32", nvHeader + "2026/08/21 08:01:40.250, 0, 100 W, -3.5e38\n",
			"line 2: field temperature.gpu out of range (-3.5e38)"},
		{"nvidia temperature NaN", nvHeader + "2026/08/21 08:01:40.250, 0, 100 W, NaN\n", "line 2: field temperature.gpu out of range (NaN)"},
		{"nvidia clock overflowing float64", "timestamp, index, power.draw [W], clocks.current.sm [MHz]\n2026/08/21 08:01:40.250, 0, 100 W, 1e400 MHz\n",
			"line 2: field clocks.current.sm out of range (1e400 MHz)"},
		{"nvidia temperature as text", nvHeader + "2026/08/21 08:01:40.250, 0, 100 W, hot\n", `line 2: field temperature.gpu: "hot" is not a number`},
		{"nvidia clock as text with a unit", "timestamp, index, power.draw [W], clocks.current.sm [MHz]\n2026/08/21 08:01:40.250, 0, 100 W, fast MHz\n",
			`line 2: field clocks.current.sm: "fast MHz" is not a number`},
		{"amd edge beyond float32", amdHeader + "1787300000,0,1000,40\n1787300001,0,1000,1e308\n", "line 3: field edge out of range (1e+308)"},
		{"amd edge Inf", amdHeader + "1787300000,0,1000,Inf\n", "line 2: field edge out of range (+Inf)"},
		{"amd hotspot beyond float32", "timestamp,gpu,socket_power,hotspot,edge\n1787300000,0,1000,1e39,40\n", "line 2: field hotspot out of range (1e+39)"},
		{"dcgm temperature beyond float32", "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w,temperature_c\n" +
			"1,1787300000.0,0,node-p,0,GPU-a,400,1e308\n", "line 2: field temperature_c out of range (1e+308)"},
		{"dcgm utilization NaN", "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w,gpu_util_pct\n" +
			"1,1787300000.0,0,node-p,0,GPU-a,400,NaN\n", "line 2: field gpu_util_pct out of range (NaN)"},
		// timestamps
		{"nvidia backwards an hour", nvHeader +
			"2026/08/21 08:01:40.250, 0, 146 W, 35\n2026/08/21 08:01:41.250, 0, 146 W, 35\n2026/08/21 07:00:00.000, 0, 146 W, 35\n",
			"line 4: timestamp 2026-08-21T07:00:00.000Z goes back 1h1m41.25s from GPU 0's sample at 2026-08-21T08:01:41.250Z (line 3)"},
		{"nvidia jump forward", nvHeader +
			"2026/08/21 07:00:00.000, 0, 146 W, 35\n2026/08/21 08:01:41.250, 0, 146 W, 35\n",
			"line 3: timestamp 2026-08-21T08:01:41.250Z jumps 1h1m41.25s past GPU 0's previous sample at 2026-08-21T07:00:00.000Z (line 2; at most 10m0s)"},
		{"nvidia last line 11 minutes on", nvHeader +
			"2026/08/21 08:00:00.000, 0, 146 W, 35\n2026/08/21 08:00:00.000, 1, 146 W, 35\n2026/08/21 08:00:01.000, 0, 146 W, 35\n" +
			"2026/08/21 08:00:01.000, 1, 146 W, 35\n2026/08/21 08:11:01.000, 0, 146 W, 35\n",
			"line 6: timestamp 2026-08-21T08:11:01.000Z jumps 11m0s past GPU 0's previous sample"},
		{"dcgm jump forward", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,400\n1,1787303600.0,1,node-p,0,GPU-a,400\n",
			"line 3: timestamp 2026-08-21T09:13:20.000Z jumps 1h0m0s past GPU 0 on node-p's previous sample"},
		{"amd jump forward", amdHeader + "1787300000,0,1000,40\n1787300601,0,1000,40\n",
			"line 3: timestamp 2026-08-21T08:23:21.000Z jumps 10m1s past GPU 0's previous sample"},
		{"nvidia year 9999", nvHeader +
			"2026/08/21 08:01:40.250, 0, 146 W, 35\n9999/08/21 08:01:41.250, 0, 146 W, 35\n",
			"line 3: impossible timestamp 9999-08-21T08:01:41.250Z (after 2026-11-22T00:00:00.000Z"},
		{"nvidia year 2001", nvHeader + "2001/08/21 08:01:40.250, 0, 146 W, 35\n",
			"line 2: impossible timestamp 2001-08-21T08:01:40.250Z (before 2015-01-01"},
		{"nvidia lone GPU a year off", nvHeader +
			"2026/08/21 08:01:40.250, 0, 146 W, 35\n2025/08/21 08:01:40.250, 1, 146 W, 35\n",
			"line 3: impossible timestamp 2025-08-21T08:01:40.250Z (more than 168h0m0s from the first sample, line 2"},
		{"amd backwards", amdHeader + "1787300010,0,1000,40\n1787300000,0,1000,40\n",
			"line 3: timestamp 2026-08-21T08:13:20.000Z goes back 10s from GPU 0's sample"},
		{"amd year 9999", amdHeader + "1787300000,0,1000,40\n253402300000,0,1000,40\n", "line 3: impossible timestamp 9999-"},
		{"dcgm backwards on one host", dcgmHeader +
			"1,1787300010.0,0,node-p,0,GPU-a,400\n1,1787300000.0,0,node-d,0,GPU-b,400\n1,1787300000.0,0,node-p,0,GPU-a,400\n",
			"line 4: timestamp 2026-08-21T08:13:20.000Z goes back 10s from GPU 0 on node-p's sample at 2026-08-21T08:13:30.000Z (line 2)"},
		{"dcgm year 9999", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,400\n1,253402300000.0,1,node-p,0,GPU-a,400\n",
			"line 3: impossible timestamp 9999-"},
		{"dcgm absurd seconds", dcgmHeader + "1,1e300,0,node-p,0,GPU-a,400\n", "line 2: impossible timestamp_unix 1e+300"},
		// strings reaching PostgreSQL
		{"dcgm hostname not UTF-8", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,400\n1,1787300000.0,0,no\xff\xfede,0,GPU-b,400\n",
			`line 3: hostname "no\xff\xfede": not valid UTF-8`},
		{"dcgm hostname with NUL", dcgmHeader + "1,1787300000.0,0,no\x00de,0,GPU-b,400\n",
			`line 2: hostname "no\x00de": contains a NUL or control character`},
		// headers
		{"dcgm power_w twice", "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w,power_w\n" +
			"1,1787300000.0,0,node-p,0,GPU-a,400,9999\n",
			`line 1: dcgm header names the "power_w" column twice (columns 7 and 8)`},
		{"dcgm hostname twice", "timestamp_unix,hostname,gpu_index,power_w,hostname\n1787300000.0,a,0,400,b\n",
			`line 1: dcgm header names the "hostname" column twice (columns 2 and 5)`},
		{"nvidia power.draw twice", "timestamp, index, power.draw [W], power.draw [mW]\n2026/08/21 08:01:40.250, 0, 146 W, 146000 mW\n",
			`line 1: nvidia-smi header names the "power.draw" column twice (columns 3 and 4)`},
		{"amd socket_power twice", "timestamp,gpu,socket_power,socket_power\n1787300000,0,1000,1\n",
			`line 1: amd-smi header names the "socket_power" column twice (columns 3 and 4)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			series, err := parseString(t, c.csv, Options{NotAfter: notAfter})
			require.Nil(t, series)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// What stays accepted next to the rules above: sentinels are dropped
// (counted) as power and null as another metric, the same in every
// format; a sample reordered within BackwardTolerance is put in time
// order; a power of exactly 0 or MaxPowerW is possible.
func TestParseSentinelsAndTolerances(t *testing.T) {
	cases := []struct {
		name, csv         string
		samples, dropped  int64
		nullTemperatureAt int // sample index with a null temperature (-1: none)
	}{
		{"nvidia sentinels", nvHeader + "2026/08/21 08:01:40.250, 0, [N/A], 35\n2026/08/21 08:01:41.250, 0, N/A, 35\n" +
			"2026/08/21 08:01:42.250, 0, 0 W, [N/A]\n2026/08/21 08:01:43.250, 0, 5000 W, 35\n", 2, 2, 0},
		{"amd sentinels", amdHeader + "1787300000,0,N/A,40\n1787300001,0,,40\n1787300002,0,0,N/A\n1787300003,0,5000,40\n", 2, 2, 0},
		{"dcgm sentinels", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,\n1,1787300001.0,1,node-p,0,GPU-a,N/A\n" +
			"1,1787300002.0,2,node-p,0,GPU-a,0\n1,1787300003.0,3,node-p,0,GPU-a,5000\n", 2, 2, -1},
		{"nvidia reordered within tolerance", nvHeader + "2026/08/21 08:01:41.250, 0, 100 W, 35\n2026/08/21 08:01:40.250, 0, 100 W, 35\n" +
			"2026/08/21 08:01:42.250, 0, 100 W, 35\n", 3, 0, -1},
		{"amd gap of exactly MaxGap", amdHeader + "1787300000,0,1000,40\n1787300600,0,1000,40\n", 2, 0, -1},
		{"dcgm hosts interleaved", dcgmHeader + "1,1787300000.0,0,node-p,0,GPU-a,100\n1,1787300000.0,0,node-d,0,GPU-b,100\n" +
			"1,1787300001.0,1,node-p,0,GPU-a,100\n1,1787300001.0,1,node-d,0,GPU-b,100\n", 4, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			series, err := parseString(t, c.csv, Options{})
			require.NoError(t, err)
			defer ReleaseAll(series)
			var samples, dropped int64
			for _, s := range series {
				samples += s.Facts.Samples
				dropped += s.Facts.Dropped
				require.Equal(t, s.Facts.Samples, s.Rows())
				require.GreaterOrEqual(t, s.Facts.AvgPowerW, 0.0)
				require.LessOrEqual(t, s.Facts.AvgPowerW, float64(MaxPowerW))
			}
			require.Equal(t, c.samples, samples)
			require.Equal(t, c.dropped, dropped)
			if c.nullTemperatureAt >= 0 {
				temp := series[0].Batches[0].Column(ColMetrics + MetricTemperature)
				require.True(t, temp.IsNull(c.nullTemperatureAt), "a sentinel temperature is null")
			}
		})
	}
}

func TestTextProblem(t *testing.T) {
	require.Empty(t, TextProblem("node-p.cluster"))
	require.Empty(t, TextProblem("nœud-π"))
	require.Equal(t, "not valid UTF-8", TextProblem("caf\xe9"))
	require.Equal(t, "not valid UTF-8", TextProblem("\xed\xa0\x80")) // an encoded lone surrogate
	require.Equal(t, "contains a NUL or control character", TextProblem("a\x00b"))
	require.Equal(t, "contains a NUL or control character", TextProblem("a\tb"))
}
