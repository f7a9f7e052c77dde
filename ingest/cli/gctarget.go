package cli

import "runtime/debug"

// gcPercent is the process's GC target when GOGC is not set: the heap may
// grow to 1.5 times the live data between collections, not twice (Go's
// default). Peak memory is one of the ingest's targets (64 MB on a
// 5000-point run); collecting more often costs a few percent of CPU, much
// less than returning freed memory to the OS and faulting it back in.
const gcPercent = 50

// SetGCTarget applies gcPercent unless the environment sets GOGC (which
// the runtime has applied already). The commands call it once, first.
func SetGCTarget(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
