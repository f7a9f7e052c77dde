package ingest_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// sampleMemory records, every 2 ms until stop is called, the peak live heap
// and the peak memory the Go runtime holds from the OS (mapped minus
// released). Benchmarks report both.
func sampleMemory(live, total *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*live = max(*live, s[0].Value.Uint64())
			*total = max(*total, s[1].Value.Uint64()-s[2].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// measured is one measured ingest of a benchmark.
type measured struct {
	sum  *schema.Summary
	took time.Duration
}

// measureIngest ingests the tree at dir into a fresh database — after an
// unmeasured first ingest when rerun — with the benchmark timer running
// only around opening the tree and the ingest. Peaks of the live heap and
// of the memory the runtime holds accumulate into live and total. The
// timer must be stopped when it is called; it is stopped when it returns.
func measureIngest(b *testing.B, dir string, rerun bool, live, total *uint64) measured {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(b), zap.NewNop())
	require.NoError(b, err)
	defer st.Close()
	deps := benchDeps(b, st)
	if rerun {
		tree, err := source.Open(ctx, dir, zap.NewNop())
		require.NoError(b, err)
		_, err = ingest.Run(ctx, ingest.Config{Target: "bench"}, tree, deps)
		require.NoError(b, err)
		tree.Close()
	}
	runtime.GC()
	stop := sampleMemory(live, total)
	started := time.Now()
	b.StartTimer()
	tree, err := source.Open(ctx, dir, zap.NewNop())
	require.NoError(b, err)
	sum, err := ingest.Run(ctx, ingest.Config{Target: "bench"}, tree, deps)
	b.StopTimer()
	took := time.Since(started)
	stop()
	require.NoError(b, err)
	tree.Close()
	return measured{sum: sum, took: took}
}
