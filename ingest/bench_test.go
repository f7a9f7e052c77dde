package ingest_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// BenchmarkIngest ingests generated runs of several sizes, first into an
// empty database and then again (the rerun finds every row). It reports
// wall time per ingest (opening the tree included) and the peak live Go
// heap (as measured after each GC) while ingesting. Row payloads are
// streamed, so the live heap grows only with per-artifact metadata and
// per-point hashes, not with the size of the files.
//
//	go test ./ingest -run '^$' -bench Ingest -benchtime 3x
func BenchmarkIngest(b *testing.B) {
	for _, points := range []int{1000, 5000} {
		dir := b.TempDir()
		_, err := generate.Write(dir, generate.Options{Points: points, Seed: 1, Retries: points / 100})
		require.NoError(b, err)
		b.Run(fmt.Sprintf("points=%d/first", points), func(b *testing.B) {
			benchIngest(b, dir, false)
		})
		b.Run(fmt.Sprintf("points=%d/rerun", points), func(b *testing.B) {
			benchIngest(b, dir, true)
		})
	}
}

func benchIngest(b *testing.B, dir string, rerun bool) {
	ctx := context.Background()
	var peak uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		url := pgtest.New(b)
		st, err := store.Open(ctx, url, zap.NewNop())
		require.NoError(b, err)
		deps := benchDeps(b, st)
		if rerun {
			tree, err := source.Open(ctx, dir, zap.NewNop())
			require.NoError(b, err)
			_, err = ingest.Run(ctx, ingest.Config{Target: "bench"}, tree, deps)
			require.NoError(b, err)
			tree.Close()
		}
		runtime.GC()
		stop := sampleHeap(&peak)
		b.StartTimer()
		tree, err := source.Open(ctx, dir, zap.NewNop())
		require.NoError(b, err)
		sum, err := ingest.Run(ctx, ingest.Config{Target: "bench"}, tree, deps)
		b.StopTimer()
		stop()
		require.NoError(b, err)
		tree.Close()
		if rerun {
			require.Zero(b, sum.Rows.Benchmark.New)
		} else {
			require.Zero(b, sum.Rows.Benchmark.Duplicate)
		}
		st.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/ingest")
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
}

// sampleHeap records the largest live heap (heap reachable at the end of
// the last GC cycle) seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
