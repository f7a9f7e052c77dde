package ingest_test

import (
	"runtime/metrics"
	"sync"
	"time"
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
