package store

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// pgEpochMicros is 2000-01-01T00:00:00Z in microseconds since the Unix
// epoch: PostgreSQL's binary timestamps count from there.
const pgEpochMicros = 946684800 * 1000000

// binary COPY framing (PostgreSQL protocol, "COPY … FORMAT binary").
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// Fields of a chunk row: series_id, gpu_index, chunk, sample_count,
// sampled_at, then one array per metric.
const chunkFields = 5 + telemetry.NumMetrics

// sampleEncoder is an io.Reader of binary COPY data for
// gpu_metric_sample_chunks, encoded batch by batch straight from the Arrow
// arrays: each run of one GPU's samples in a batch is one chunk row. No
// per-sample values, no allocations beyond its reused buffer.
type sampleEncoder struct {
	next   func() (telemetry.SampleBatch, bool, error)
	buf    []byte
	off    int
	header bool
	done   bool
	// rows counts samples, chunks the chunk rows.
	rows, chunks int64
	err          error
	// cur is a batch handed over but not yet released (on early close).
	cur *telemetry.SampleBatch
	// series and chunkNo number the chunks of each GPU of the current
	// series.
	series  int64
	chunkNo map[int16]int32
}

func newSampleEncoder(next func() (telemetry.SampleBatch, bool, error)) *sampleEncoder {
	return &sampleEncoder{next: next, buf: make([]byte, 0, 1<<20), chunkNo: map[int16]int32{}}
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

// encode appends the chunk rows of a batch: one per run of consecutive
// samples of one GPU (a series' batches hold one GPU each).
func (e *sampleEncoder) encode(b telemetry.SampleBatch) {
	if b.SeriesID != e.series {
		e.series = b.SeriesID
		clear(e.chunkNo)
	}
	rec := b.Rec
	n := int(rec.NumRows())
	gpu := rec.Column(telemetry.ColGPU).(*array.Int16).Int16Values()
	ts := rec.Column(telemetry.ColTimestamp).(*array.Timestamp).TimestampValues()
	var metrics [telemetry.NumMetrics]*array.Float32
	for m := range metrics {
		metrics[m] = rec.Column(telemetry.ColMetrics + m).(*array.Float32)
	}
	// Upper bound of a row: field count, 4 fixed fields, the timestamp
	// array and every metric array with their headers.
	const arrayHeader = 4 + 4 + 4 + 4 + 4 + 4
	rowMax := func(k int) int {
		return 2 + (4 + 8) + (4 + 2) + 2*(4+4) + arrayHeader + k*(4+8) + telemetry.NumMetrics*(arrayHeader+k*(4+4))
	}
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && gpu[hi] == gpu[lo] {
			hi++
		}
		e.grow(rowMax(hi - lo))
		e.chunkRow(b.SeriesID, gpu[lo], ts[lo:hi], &metrics, lo, hi)
		lo = hi
	}
}

func (e *sampleEncoder) grow(k int) {
	if need := len(e.buf) + k; cap(e.buf) < need {
		nb := make([]byte, len(e.buf), max(need, 2*cap(e.buf)))
		copy(nb, e.buf)
		e.buf = nb
	}
}

// chunkRow appends one chunk row: samples lo..hi of the batch, all of GPU
// gpu. A metric without a value in the chunk is NULL, not an array of
// NULLs.
func (e *sampleEncoder) chunkRow(series int64, gpu int16, ts []arrow.Timestamp, metrics *[telemetry.NumMetrics]*array.Float32, lo, hi int) {
	be := binary.BigEndian
	k := hi - lo
	no := e.chunkNo[gpu]
	e.chunkNo[gpu] = no + 1
	buf := e.buf
	buf = be.AppendUint16(buf, chunkFields)
	buf = be.AppendUint32(buf, 8)
	buf = be.AppendUint64(buf, uint64(series))
	buf = be.AppendUint32(buf, 2)
	buf = be.AppendUint16(buf, uint16(gpu))
	buf = be.AppendUint32(buf, 4)
	buf = be.AppendUint32(buf, uint32(no))
	buf = be.AppendUint32(buf, 4)
	buf = be.AppendUint32(buf, uint32(k))

	buf = appendArrayHeader(buf, 20+k*(4+8), false, pgtype.TimestamptzOID, k)
	for _, t := range ts {
		buf = be.AppendUint32(buf, 8)
		buf = be.AppendUint64(buf, uint64(int64(t)-pgEpochMicros))
	}
	for _, col := range metrics {
		valid := k
		if col.NullN() > 0 {
			valid = 0
			for i := lo; i < hi; i++ {
				if col.IsValid(i) {
					valid++
				}
			}
		}
		if valid == 0 {
			buf = be.AppendUint32(buf, math.MaxUint32) // -1: NULL
			continue
		}
		vals := col.Float32Values()
		buf = appendArrayHeader(buf, 20+valid*(4+4)+(k-valid)*4, valid < k, pgtype.Float4OID, k)
		for i := lo; i < hi; i++ {
			if valid == k || col.IsValid(i) {
				buf = be.AppendUint32(buf, 4)
				buf = be.AppendUint32(buf, math.Float32bits(vals[i]))
			} else {
				buf = be.AppendUint32(buf, math.MaxUint32) // -1: NULL element
			}
		}
	}
	e.buf = buf
	e.rows += int64(k)
	e.chunks++
}

// appendArrayHeader appends a field length and the header of a
// one-dimensional array of n elements (lower bound 1) in PostgreSQL's
// binary array format.
func appendArrayHeader(buf []byte, size int, hasNull bool, elem uint32, n int) []byte {
	be := binary.BigEndian
	flags := uint32(0)
	if hasNull {
		flags = 1
	}
	buf = be.AppendUint32(buf, uint32(size))
	buf = be.AppendUint32(buf, 1) // dimensions
	buf = be.AppendUint32(buf, flags)
	buf = be.AppendUint32(buf, elem)
	buf = be.AppendUint32(buf, uint32(n))
	return be.AppendUint32(buf, 1) // lower bound
}
