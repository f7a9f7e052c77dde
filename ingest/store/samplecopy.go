package store

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// pgEpochMicros is 2000-01-01T00:00:00Z in microseconds since the Unix
// epoch: PostgreSQL's binary timestamps count from there.
const pgEpochMicros = 946684800 * 1000000

// binary COPY framing (PostgreSQL protocol, "COPY … FORMAT binary").
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

const sampleFields = 3 + telemetry.NumMetrics

// sampleEncoder is an io.Reader of binary COPY data, encoded batch by batch
// straight from the Arrow arrays: no per-row values, no allocations beyond
// its reused buffer.
type sampleEncoder struct {
	next   func() (telemetry.SampleBatch, bool, error)
	buf    []byte
	off    int
	header bool
	done   bool
	rows   int64
	err    error
	// cur is a batch handed over but not yet released (on early close).
	cur *telemetry.SampleBatch
}

func newSampleEncoder(next func() (telemetry.SampleBatch, bool, error)) *sampleEncoder {
	return &sampleEncoder{next: next, buf: make([]byte, 0, 1<<20)}
}

func (e *sampleEncoder) Read(p []byte) (int, error) {
	for e.off == len(e.buf) {
		if e.err != nil {
			return 0, e.err
		}
		if e.done {
			return 0, io.EOF
		}
		e.buf, e.off = e.buf[:0], 0
		if !e.header {
			e.buf = append(e.buf, copyHeader...)
			e.header = true
		}
		b, ok, err := e.next()
		if err != nil {
			e.err = err
			return 0, err
		}
		if !ok {
			e.buf = binary.BigEndian.AppendUint16(e.buf, 0xffff) // trailer
			e.done = true
			continue
		}
		e.cur = &b
		e.encode(b)
		b.Rec.Release()
		e.cur = nil
	}
	n := copy(p, e.buf[e.off:])
	e.off += n
	return n, nil
}

func (e *sampleEncoder) close() {
	if e.cur != nil {
		e.cur.Rec.Release()
		e.cur = nil
	}
}

func (e *sampleEncoder) encode(b telemetry.SampleBatch) {
	rec := b.Rec
	n := int(rec.NumRows())
	gpu := rec.Column(telemetry.ColGPU).(*array.Int16).Int16Values()
	ts := rec.Column(telemetry.ColTimestamp).(*array.Timestamp).TimestampValues()
	var metrics [telemetry.NumMetrics]*array.Float32
	var values [telemetry.NumMetrics][]float32
	for m := range metrics {
		metrics[m] = rec.Column(telemetry.ColMetrics + m).(*array.Float32)
		values[m] = metrics[m].Float32Values()
	}
	const rowMax = 2 + 4 + 8 + 4 + 2 + 4 + 8 + telemetry.NumMetrics*8
	buf := e.buf
	if need := len(buf) + n*rowMax; cap(buf) < need {
		nb := make([]byte, len(buf), need)
		copy(nb, buf)
		buf = nb
	}
	be := binary.BigEndian
	for i := 0; i < n; i++ {
		buf = be.AppendUint16(buf, sampleFields)
		buf = be.AppendUint32(buf, 8)
		buf = be.AppendUint64(buf, uint64(b.SeriesID))
		buf = be.AppendUint32(buf, 2)
		buf = be.AppendUint16(buf, uint16(gpu[i]))
		buf = be.AppendUint32(buf, 8)
		buf = be.AppendUint64(buf, uint64(int64(ts[i])-pgEpochMicros))
		for m := range metrics {
			if metrics[m].IsValid(i) {
				buf = be.AppendUint32(buf, 4)
				buf = be.AppendUint32(buf, math.Float32bits(values[m][i]))
			} else {
				buf = be.AppendUint32(buf, math.MaxUint32) // -1: NULL
			}
		}
	}
	e.buf = buf
	e.rows += int64(n)
}
