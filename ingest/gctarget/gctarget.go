// Package gctarget holds the commands' garbage-collection target.
//
// The commands collect more often than Go's default (Default): the heap
// may grow to 1.75 times the live data between collections, not twice.
// That trades some CPU for a lower peak, far cheaper than returning freed
// memory to the OS and faulting it back in. 75 is the point past which a
// higher target buys no time for more memory, and below which a lower one
// costs time for little memory (docs/performance.md, "Current figures").
// A stage whose working set is large and bounded by its own budget
// (telemetry: Arrow batches within its parse budget) asks for Go's default
// while it runs (LargeHeap), since collecting at the commands' target
// slows it down.
package gctarget

import (
	"runtime/debug"
	"sync"
)

const (
	// Default is the commands' GC percent.
	Default = 75
	// Large is the GC percent while a stage holds a large working set.
	Large = 100
)

// Target is the GC target the commands set. A nil Target — the
// environment set GOGC, or a caller that set nothing — changes nothing.
type Target struct {
	mu sync.Mutex
	// held counts the callers of LargeHeap that are not done.
	held int
}

// Apply sets Default unless the environment sets GOGC (which the runtime
// has applied already), and returns the Target it set; nil when GOGC is
// set. The commands call it once, first.
func Apply(getenv func(string) string) *Target {
	if getenv("GOGC") != "" {
		return nil
	}
	debug.SetGCPercent(Default)
	return &Target{}
}

// LargeHeap sets Large until the returned done is called; with several
// callers at once (backfill workers), until the last of them is done.
// done may be called more than once.
func (t *Target) LargeHeap() (done func()) {
	if t == nil {
		return func() {}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held == 0 {
		debug.SetGCPercent(Large)
	}
	t.held++
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.held--; t.held == 0 {
				debug.SetGCPercent(Default)
			}
		})
	}
}
