package telemetry

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// seriesBuilder accumulates the canonical batches of one series, one
// builder per GPU, and per GPU the (time, power) pairs its facts are
// computed from. Batches come out GPU by GPU, each GPU's samples in time
// order as collected, so the COPY inserts in primary-key order (series,
// GPU, time) and PostgreSQL appends to the rightmost index leaf.
type seriesBuilder struct {
	host string
	opt  Options
	gpus map[int16]*gpuTrack
	// dropped counts rows without a power value, dups repeated (GPU, time)
	// rows; both are left out of the series.
	dropped, dups int64
	// uuids is each GPU's first non-empty gpu_uuid (DCGM)
	uuids map[int16]string
}

// noteUUID keeps the first UUID a GPU's rows with a power value name.
func (b *seriesBuilder) noteUUID(gpu int16, cell string) {
	u := strings.TrimSpace(cell)
	if u == "" || TextProblem(u) != "" {
		return
	}
	if _, ok := b.uuids[gpu]; ok {
		return
	}
	if b.uuids == nil {
		b.uuids = map[int16]string{}
	}
	b.uuids[gpu] = strings.Clone(u)
}

// gpuTrack is one GPU's accepted samples: its batches and, in arrival
// order, the times and powers the facts use.
type gpuTrack struct {
	bld     *array.RecordBuilder
	gpuB    *array.Int16Builder
	tsB     *array.TimestampBuilder
	mB      [NumMetrics]*array.Float32Builder
	pending int
	// room is how many more samples the builders have reserved space for
	room    int
	batches []arrow.RecordBatch

	ts       []int64
	power    []float32
	unsorted bool
	// latest is the latest time accepted, latestLine its line.
	latest, latestLine int64
	// seen is built once samples stop arriving in time order.
	seen map[int64]struct{}
}

// gpuReserve is the first reservation of a GPU's builder; it grows by
// doubling up to the chunk size.
const gpuReserve = 1024

func newSeriesBuilder(opt Options, host string) *seriesBuilder {
	return &seriesBuilder{host: host, opt: opt, gpus: map[int16]*gpuTrack{}}
}

func (b *seriesBuilder) track(gpu int16) *gpuTrack {
	t := b.gpus[gpu]
	if t == nil {
		t = &gpuTrack{bld: array.NewRecordBuilder(b.opt.Mem, SampleSchema)}
		t.gpuB = t.bld.Field(ColGPU).(*array.Int16Builder)
		t.tsB = t.bld.Field(ColTimestamp).(*array.TimestampBuilder)
		for m := range t.mB {
			t.mB[m] = t.bld.Field(ColMetrics + m).(*array.Float32Builder)
		}
		b.gpus[gpu] = t
	}
	return t
}

// append adds one sample (of file line line) unless its power is missing
// or its (GPU, time) was seen before. A sample further back than
// BackwardTolerance before the GPU's latest sample, or more than MaxGap
// after it, fails the file.
func (b *seriesBuilder) append(line int64, gpu int16, ts int64, vals *[NumMetrics]float32, valid *[NumMetrics]bool) error {
	if !valid[MetricPower] {
		b.dropped++
		return nil
	}
	t := b.track(gpu)
	if len(t.ts) > 0 {
		switch {
		case t.latest-ts > BackwardTolerance.Microseconds():
			return parseErr(line, "timestamp %s goes back %v from GPU %d%s's sample at %s (line %d)",
				fmtMicros(ts), time.Duration(t.latest-ts)*time.Microsecond, gpu, b.onHost(), fmtMicros(t.latest), t.latestLine)
		case ts-t.latest > MaxGap.Microseconds():
			return parseErr(line, "timestamp %s jumps %v past GPU %d%s's previous sample at %s (line %d; at most %v)",
				fmtMicros(ts), time.Duration(ts-t.latest)*time.Microsecond, gpu, b.onHost(), fmtMicros(t.latest), t.latestLine, MaxGap)
		}
	}
	if len(t.ts) == 0 || ts > t.latest {
		t.latest, t.latestLine = ts, line
	}
	if n := len(t.ts); n > 0 && ts <= t.ts[n-1] {
		if t.seen == nil {
			t.seen = make(map[int64]struct{}, n+1)
			for _, x := range t.ts {
				t.seen[x] = struct{}{}
			}
		}
		if _, dup := t.seen[ts]; dup {
			b.dups++
			return nil
		}
		t.unsorted = true
	}
	if t.seen != nil {
		t.seen[ts] = struct{}{}
	}
	t.ts = append(t.ts, ts)
	t.power = append(t.power, vals[MetricPower])
	if t.room == 0 {
		// Reserve for the batch by doubling up to the chunk size, then
		// append without a capacity check per value.
		t.room = min(max(t.pending, gpuReserve), b.opt.Chunk-t.pending)
		t.bld.Reserve(t.room)
	}
	t.gpuB.UnsafeAppend(gpu)
	t.tsB.UnsafeAppend(arrow.Timestamp(ts))
	for m, mb := range t.mB {
		if valid[m] {
			mb.UnsafeAppend(vals[m])
		} else {
			mb.UnsafeAppendBoolToBitmap(false)
		}
	}
	t.pending++
	t.room--
	if t.pending >= b.opt.Chunk {
		t.flush()
	}
	return nil
}

// onHost names the host of a DCGM series in a message ("" otherwise).
func (b *seriesBuilder) onHost() string {
	if b.host == "" {
		return ""
	}
	return " on " + b.host
}

func (t *gpuTrack) flush() {
	if t.pending == 0 {
		return
	}
	t.batches = append(t.batches, t.bld.NewRecordBatch())
	t.pending, t.room = 0, 0
}

func (b *seriesBuilder) release() {
	for _, t := range b.gpus {
		for _, r := range t.batches {
			r.Release()
		}
		t.batches = nil
		t.bld.Release()
	}
}

// finish returns the series: its batches GPU by GPU (ascending index).
func (b *seriesBuilder) finish(l *layout) (*Series, error) {
	ids := slices.Sorted(maps.Keys(b.gpus))
	s := &Series{Format: l.format, Vendor: l.vendor, Host: b.host, GPUUUIDs: b.uuids}
	for _, g := range ids {
		t := b.gpus[g]
		t.flush()
		t.bld.Release()
		s.Batches = append(s.Batches, t.batches...)
		t.batches = nil
	}
	s.Facts = computeFacts(b.gpus, b.opt.Window)
	s.Facts.Dropped, s.Facts.Duplicates = b.dropped, b.dups
	if s.Facts.Samples == 0 {
		s.Release()
		return nil, &ParseError{Reason: "no usable power samples"}
	}
	s.Stats = computeStats(s)
	return s, nil
}

// sorted orders a GPU's samples by time when they did not arrive in order.
func (t *gpuTrack) sorted() {
	if !t.unsorted {
		return
	}
	idx := make([]int, len(t.ts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return t.ts[idx[i]] < t.ts[idx[j]] })
	ts, p := make([]int64, len(idx)), make([]float32, len(idx))
	for i, k := range idx {
		ts[i], p[i] = t.ts[k], t.power[k]
	}
	t.ts, t.power, t.unsorted = ts, p, false
}

func sortedHosts(m map[string]*seriesBuilder) []*seriesBuilder {
	out := make([]*seriesBuilder, 0, len(m))
	for _, b := range m {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].host < out[j].host })
	return out
}
