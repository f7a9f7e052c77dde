package telemetry

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// BenchmarkParseNVIDIA parses an hour of 8-GPU nvidia-smi telemetry
// (28 808 rows) with the pool allocator, as the ingest does.
//
//	go test ./ingest/telemetry -run '^$' -bench Parse
func BenchmarkParseNVIDIA(b *testing.B) {
	data, rows := benchNVIDIA()
	pool := NewPool()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		series, err := Parse(bytes.NewReader(data), Options{Mem: pool})
		if err != nil {
			b.Fatal(err)
		}
		ReleaseAll(series)
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkStatsNVIDIA is the per-GPU digest's share of a parse: the
// digest of the same hour, computed again from its batches.
//
//	go test ./ingest/telemetry -run '^$' -bench Stats
func BenchmarkStatsNVIDIA(b *testing.B) {
	data, rows := benchNVIDIA()
	series, err := Parse(bytes.NewReader(data), Options{Mem: NewPool()})
	if err != nil {
		b.Fatal(err)
	}
	defer ReleaseAll(series)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		computeStats(series[0])
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchNVIDIA is an hour of 8-GPU nvidia-smi telemetry and its row count.
func benchNVIDIA() ([]byte, int) {
	var buf bytes.Buffer
	buf.WriteString("timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]\n")
	start := time.Date(2026, 9, 8, 7, 20, 19, 279e6, time.UTC)
	rows := 0
	for s := 0; s <= 3600; s++ {
		ts := start.Add(time.Duration(s) * time.Second).Format("2006/01/02 15:04:05.000")
		for g := 0; g < 8; g++ {
			fmt.Fprintf(&buf, "%s, %d, %.2f W, %d, 1965 MHz, 3996 MHz, 100 %%, 9 %%\n", ts, g, 380+float64((s*7+g*13)%50)/3, 36+g)
			rows++
		}
	}
	return buf.Bytes(), rows
}
