package telemetry

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// seriesBuilder accumulates the canonical batches of one series and, per
// GPU, the (time, power) pairs its facts are computed from.
type seriesBuilder struct {
	host    string
	opt     Options
	bld     *array.RecordBuilder
	gpuB    *array.Int16Builder
	tsB     *array.TimestampBuilder
	mB      [NumMetrics]*array.Float32Builder
	pending int
	batches []arrow.RecordBatch
	gpus    map[int16]*gpuTrack
	// dropped counts rows without a power value, dups repeated (GPU, time)
	// rows; both are left out of the series.
	dropped, dups int64
}

// gpuTrack is one GPU's accepted samples, in arrival order.
type gpuTrack struct {
	ts       []int64
	power    []float32
	unsorted bool
	// seen is built once samples stop arriving in time order.
	seen map[int64]struct{}
}

func newSeriesBuilder(opt Options, host string) *seriesBuilder {
	b := &seriesBuilder{host: host, opt: opt, gpus: map[int16]*gpuTrack{}}
	b.bld = array.NewRecordBuilder(opt.Mem, SampleSchema)
	b.gpuB = b.bld.Field(ColGPU).(*array.Int16Builder)
	b.tsB = b.bld.Field(ColTimestamp).(*array.TimestampBuilder)
	for m := range b.mB {
		b.mB[m] = b.bld.Field(ColMetrics + m).(*array.Float32Builder)
	}
	return b
}

// append adds one sample unless its power is missing or its (GPU, time)
// was seen before.
func (b *seriesBuilder) append(gpu int16, ts int64, vals *[NumMetrics]float32, valid *[NumMetrics]bool) {
	if !valid[MetricPower] {
		b.dropped++
		return
	}
	t := b.gpus[gpu]
	if t == nil {
		t = &gpuTrack{}
		b.gpus[gpu] = t
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
			return
		}
		t.unsorted = true
	}
	if t.seen != nil {
		t.seen[ts] = struct{}{}
	}
	t.ts = append(t.ts, ts)
	t.power = append(t.power, vals[MetricPower])
	if b.pending == 0 {
		b.bld.Reserve(b.opt.Chunk)
	}
	b.gpuB.Append(gpu)
	b.tsB.Append(arrow.Timestamp(ts))
	for m, mb := range b.mB {
		if valid[m] {
			mb.Append(vals[m])
		} else {
			mb.AppendNull()
		}
	}
	b.pending++
	if b.pending >= b.opt.Chunk {
		b.flush()
	}
}

func (b *seriesBuilder) flush() {
	if b.pending == 0 {
		return
	}
	b.batches = append(b.batches, b.bld.NewRecordBatch())
	b.pending = 0
}

func (b *seriesBuilder) release() {
	for _, r := range b.batches {
		r.Release()
	}
	b.batches = nil
	b.bld.Release()
}

func (b *seriesBuilder) finish(l *layout) (*Series, error) {
	b.flush()
	b.bld.Release()
	s := &Series{Format: l.format, Vendor: l.vendor, Host: b.host, Batches: b.batches}
	b.batches = nil
	s.Facts = computeFacts(b.gpus, b.opt.Window)
	s.Facts.Dropped, s.Facts.Duplicates = b.dropped, b.dups
	if s.Facts.Samples == 0 {
		s.Release()
		return nil, &ParseError{Reason: "no usable power samples"}
	}
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
