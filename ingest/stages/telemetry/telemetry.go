// Package telemetry is the telemetry stage: GPU-metrics series of the run
// attached to the benchmark points they measured, stored with their
// samples, checked against the published power, and the required-power
// contract. It reads the files with the format package ingest/telemetry,
// imported as tel.
package telemetry

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/runstate"
	tel "github.com/inferencex/ingest/ingest/telemetry"
	"github.com/inferencex/ingest/schema"
)

// Writer is what the telemetry stage needs from the run's transaction.
type Writer interface {
	// TelemetryState reads the run's stored series and benchmark rows.
	TelemetryState(ctx context.Context) (tel.RunState, error)
	// ReserveSeriesIDs takes n series ids, so samples can be sent first.
	ReserveSeriesIDs(ctx context.Context, n int) ([]int64, error)
	// CopySamples streams sample batches with one COPY, releasing each.
	CopySamples(ctx context.Context, next func() (tel.SampleBatch, bool, error)) (int64, error)
	// WriteSeries deletes replaced series, inserts new ones and links.
	WriteSeries(ctx context.Context, replace []int64, rows []tel.SeriesRow, links []tel.Link) (tel.WriteResult, error)
}

// Run is the telemetry stage: every GPU-metrics series of the run is
// attached to the benchmark point it measured, stored with its samples
// unless an identical series is stored already, and checked against the
// power the point publishes. Round trips are constant per run: one read
// of the run's state, one id reservation, one COPY of every new sample,
// one write of series rows and links. It returns what it counted, for the
// summary.
func Run(ctx context.Context, w Writer, env *runstate.Env) (schema.Counters, error) {
	var c schema.Counters
	err := run(ctx, w, env, &c)
	return c, err
}

func run(ctx context.Context, w Writer, env *runstate.Env, c *schema.Counters) error {
	started := time.Now()
	sources := telemetrySources(env)
	manifests := env.Plan.Artifacts(runstate.KindPowerManifest)
	if len(sources) == 0 && len(manifests) == 0 {
		return nil
	}
	// Its Arrow batches and series, bounded by the parse budget, are a
	// large live heap that collecting at the commands' usual target
	// would slow down (gctarget).
	if large := env.Deps.LargeHeap; large != nil {
		defer large()()
	}
	state, err := w.TelemetryState(ctx)
	if err != nil {
		return err
	}
	st := newTelemetryStage(env, state, c)
	defer st.releaseArtifacts()
	for _, src := range sources {
		st.plan(src)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st.cpuSide()
	if err := st.hashAll(ctx); err != nil {
		return err
	}
	ids, err := w.ReserveSeriesIDs(ctx, st.idsNeeded())
	if err != nil {
		return err
	}
	st.ids = ids
	env.Deps.Expect("series", int64(st.idsNeeded()))
	copied, err := st.copyNew(ctx, w)
	if err != nil {
		return err
	}
	if err := st.finishSidecars(); err != nil {
		return err
	}
	res, err := w.WriteSeries(ctx, st.replace, st.rows, st.links)
	if err != nil {
		return err
	}
	if res.SeriesInserted != int64(len(st.rows)) {
		return fmt.Errorf("wrote %d series rows, expected %d", res.SeriesInserted, len(st.rows))
	}
	if copied != st.samples {
		return fmt.Errorf("copied %d samples, the series hold %d", copied, st.samples)
	}
	c.Rows.Power.New += int64(len(st.rows))
	c.Stats.GPUMetricSamplesNew += copied
	st.publication()
	for _, m := range manifests {
		st.requiredPower(m)
	}
	st.finishSummary()
	env.Log.Info("telemetry stored", zap.Int("series_new", len(st.rows)), zap.Int64("series_duplicate", c.Rows.Power.Duplicate),
		zap.Int64("samples_new", copied), zap.Int64("links_new", res.LinksInserted), zap.Duration("took", time.Since(started)))
	return nil
}

// telemetryAllocator is the Arrow allocator of the stage: a pool that
// recycles the buffers of released batches, unless the caller injects one.
func telemetryAllocator(d runstate.Deps) memory.Allocator {
	if d.Arrow != nil {
		return d.Arrow
	}
	return tel.NewPool()
}
