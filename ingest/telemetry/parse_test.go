package telemetry

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// render prints series as the golden files hold them: the facts, then
// every sample.
func render(series []*Series) string {
	var b strings.Builder
	for _, s := range series {
		facts, _ := json.MarshalIndent(s.Facts, "", "  ")
		fmt.Fprintf(&b, "series format=%s vendor=%s host=%q rows=%d\nfacts %s\n", s.Format, s.Vendor, s.Host, s.Rows(), facts)
		for _, st := range s.Stats {
			fmt.Fprintf(&b, "stat gpu=%d %s n=%d min=%g max=%g mean=%g median=%g p95=%g p99=%g stddev=%g\n", st.GPU,
				MetricNames[st.Metric], st.Count, st.Min, st.Max, st.Mean, st.Median, st.P95, st.P99, st.Stddev)
		}
		for _, rec := range s.Batches {
			gpu := rec.Column(ColGPU).(*array.Int16)
			ts := rec.Column(ColTimestamp).(*array.Timestamp)
			for i := 0; i < int(rec.NumRows()); i++ {
				fmt.Fprintf(&b, "%d %s", gpu.Value(i), time.UnixMicro(int64(ts.Value(i))).UTC().Format("2006-01-02T15:04:05.000Z"))
				for m := 0; m < NumMetrics; m++ {
					col := rec.Column(ColMetrics + m).(*array.Float32)
					if col.IsValid(i) {
						fmt.Fprintf(&b, " %s=%g", MetricNames[m], col.Value(i))
					}
				}
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

func parseFile(t *testing.T, mem memory.Allocator, name string, opt Options) ([]*Series, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	opt.Mem = mem
	return Parse(f, opt)
}

func TestParseGolden(t *testing.T) {
	cases := []struct {
		file string
		opt  Options
	}{
		{"nvidia-b200-real.csv", Options{}},
		{"nvidia-golden-real.csv", Options{}},
		{"nvidia-sentinels.csv", Options{Chunk: 2, UTCOffset: 2 * time.Hour}},
		{"amd-mi355x.csv", Options{Chunk: 3}},
		{"dcgm-samples.csv", Options{Window: &Window{Start: 1787300000_500000, End: 1787300001_500000, Source: "test"}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			series, err := parseFile(t, mem, c.file, c.opt)
			require.NoError(t, err)
			defer ReleaseAll(series)
			got := render(series)
			golden := filepath.Join("testdata", strings.TrimSuffix(c.file, ".csv")+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), got)
		})
	}
}

func TestParseRealExcerptFacts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	series, err := parseFile(t, mem, "nvidia-b200-real.csv", Options{})
	require.NoError(t, err)
	defer ReleaseAll(series)
	require.Len(t, series, 1)
	f := series[0].Facts
	// provenance.json of the excerpt: 24 samples, 8 GPUs, 07:20:19.279–07:20:21.279Z.
	require.EqualValues(t, 24, f.Samples)
	require.Equal(t, 8, f.GPUs)
	require.Equal(t, "2026-09-08T07:20:19.279Z", time.UnixMicro(f.Start).UTC().Format("2006-01-02T15:04:05.000Z"))
	require.Equal(t, "2026-09-08T07:20:21.279Z", time.UnixMicro(f.End).UTC().Format("2006-01-02T15:04:05.000Z"))
	require.InDelta(t, 1.0, f.IntervalS, 1e-9)
}

func TestParseMalformed(t *testing.T) {
	cases := []struct{ file, want string }{
		{"bad-header.csv", "line 1: unknown telemetry header"},
		{"bad-ragged.csv", "line 3: row has 2 fields, the header 3"},
		{"bad-power.csv", `line 3: non-numeric power "lots W"`},
		{"bad-power-amd.csv", `line 2: invalid number: strconv.ParseFloat: parsing "12x"`},
		{"bad-timestamp.csv", "line 2: invalid timestamp"},
		{"bad-header-only.csv", "no usable power samples"},
		{"bad-empty.csv", "empty telemetry file"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			series, err := parseFile(t, mem, c.file, Options{Chunk: 1})
			require.Nil(t, series)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestParseUTCOffset(t *testing.T) {
	for in, want := range map[string]time.Duration{"UTC": 0, "+0000": 0, "+05:30": 5*time.Hour + 30*time.Minute, "-0700": -7 * time.Hour} {
		got, ok := ParseUTCOffset(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "local", "+5", "+25:00"} {
		_, ok := ParseUTCOffset(in)
		require.False(t, ok, in)
	}
}

func TestFastDecimalMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "146.72", "182.37", "0.1", "1965", "99999999999999.9", "-3.5", "7.", ".5", "123456789012345"} {
		got, ok := fastDecimal(s)
		require.True(t, ok, s)
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "-", ".", "1e5", "1.2.3", "1234567890123456", "abc"} {
		_, ok := fastDecimal(s)
		require.False(t, ok, s)
	}
}

func TestPoolRecyclesZeroedBuffers(t *testing.T) {
	p := NewPool()
	b := p.Allocate(100)
	require.Len(t, b, 100)
	require.Equal(t, 128, cap(b))
	for i := range b {
		b[i] = 0xff
	}
	p.Free(b)
	c := p.Allocate(70)
	require.Equal(t, 128, cap(c))
	for _, x := range c[:cap(c)] {
		require.Zero(t, x)
	}
	d := p.Reallocate(300, c)
	require.Len(t, d, 300)
	require.Equal(t, 512, cap(d))
}
