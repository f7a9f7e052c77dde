package store

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// sampleChunk is one gpu_metric_sample_chunks row as the export scans it:
// a metric column that is NULL scans as a nil slice.
type sampleChunk struct {
	series  int64
	gpu     int16
	at      []time.Time
	metrics [telemetry.NumMetrics][]pgtype.Float4
}

// gpuSamples gathers the samples of one GPU of one series from its
// chunks, to hand them out in time order.
type gpuSamples struct {
	series  int64
	gpu     int16
	at      []int64
	metrics [telemetry.NumMetrics][]pgtype.Float4
	sorted  bool
}

func (g *gpuSamples) n() int { return len(g.at) }

func (g *gpuSamples) reset(series int64, gpu int16) {
	g.series, g.gpu, g.at, g.sorted = series, gpu, g.at[:0], true
	for m := range g.metrics {
		g.metrics[m] = g.metrics[m][:0]
	}
}

// add appends a chunk's samples; a metric the chunk lacks is NULL on each.
func (g *gpuSamples) add(c *sampleChunk) error {
	k := len(c.at)
	for m, vals := range c.metrics {
		if vals != nil && len(vals) != k {
			return fmt.Errorf("chunk with %d times has %d %s values", k, len(vals), telemetry.MetricNames[m])
		}
	}
	for _, t := range c.at {
		us := t.UnixMicro()
		if n := len(g.at); n > 0 && us <= g.at[n-1] {
			g.sorted = false
		}
		g.at = append(g.at, us)
	}
	for m, vals := range c.metrics {
		if vals == nil {
			g.metrics[m] = append(g.metrics[m], make([]pgtype.Float4, k)...)
		} else {
			g.metrics[m] = append(g.metrics[m], vals...)
		}
	}
	return nil
}

// emit hands each sample to each in time order, reusing row. Samples
// already in time order (the usual case) are handed over as stored.
func (g *gpuSamples) emit(row *telemetry.ExportRow, each func(*telemetry.ExportRow) error) error {
	var order []int
	if !g.sorted {
		order = make([]int, len(g.at))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(g.at[a], g.at[b]) })
	}
	for j := range g.at {
		i := j
		if order != nil {
			i = order[j]
		}
		row.SampledAt = g.at[i]
		for m := range g.metrics {
			v := g.metrics[m][i]
			row.Metrics[m], row.Valid[m] = v.Float32, v.Valid
		}
		if err := each(row); err != nil {
			return err
		}
	}
	return nil
}
