package export

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkTelemetryParquet writes 1M samples (8 row groups) to a discarding
// writer: the export's cost per sample and its allocations.
//
//	go test ./ingest/export -run '^$' -bench TelemetryParquet -benchmem
func BenchmarkTelemetryParquet(b *testing.B) {
	rows := randomRows(rand.New(rand.NewPCG(5, 6)), 1<<20)
	var n countingWriter
	b.ResetTimer()
	for range b.N {
		n = 0
		if _, err := telemetryParquet(context.Background(), rows, 1, 0, &n, BatchRows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(n), "file-bytes")
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
