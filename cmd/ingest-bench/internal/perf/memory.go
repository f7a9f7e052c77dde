package perf

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// Memory is what a pass held at its peak.
type Memory struct {
	// PeakRSS is the process's resident set high-water mark over the pass
	// (VmHWM, reset before the pass through /proc/self/clear_refs); -1 where
	// that is not available (not Linux, or the reset was refused).
	PeakRSS int64
	// PeakLiveHeap is the largest live Go heap seen after a GC, and
	// PeakGoMemory the most memory the Go runtime held from the OS (mapped
	// minus released: heap with its GC headroom, stacks, runtime), both
	// sampled every 2 ms.
	PeakLiveHeap, PeakGoMemory uint64
}

// memoryProbe measures one pass: start before it, stop after.
type memoryProbe struct {
	done  chan struct{}
	wg    sync.WaitGroup
	live  uint64
	total uint64
	rssOK bool
}

// startMemory returns the memory the runtime no longer needs to the OS,
// resets the RSS high-water mark and starts sampling the Go runtime.
func startMemory() *memoryProbe {
	p := &memoryProbe{done: make(chan struct{}), rssOK: resetPeakRSS()}
	p.wg.Go(func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			p.live = max(p.live, s[0].Value.Uint64())
			p.total = max(p.total, s[1].Value.Uint64()-s[2].Value.Uint64())
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	})
	return p
}

// stop ends the sampling and reads the peaks.
func (p *memoryProbe) stop() Memory {
	close(p.done)
	p.wg.Wait()
	m := Memory{PeakRSS: -1, PeakLiveHeap: p.live, PeakGoMemory: p.total}
	if p.rssOK {
		if hwm, ok := readVmHWM(); ok {
			m.PeakRSS = hwm
		}
	}
	return m
}

// resetPeakRSS returns the memory the runtime no longer needs to the OS
// (after a collection) and resets the process's peak RSS (VmHWM) to its
// current RSS; it reports whether the reset was possible (Linux).
func resetPeakRSS() bool {
	debug.FreeOSMemory() // collects first
	// "5" resets the peak RSS (VmHWM) to the current RSS (proc(5)).
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// readVmHWM reads the peak resident set size from /proc/self/status.
func readVmHWM() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
