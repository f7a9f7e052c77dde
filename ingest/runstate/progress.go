package runstate

// Progress is told how far the stages of a run have got; on a terminal
// the CLI draws it as one live line per stage. The pipeline starts and
// ends each stage; the stage says what it counts and counts it, possibly
// from several goroutines at once.
type Progress interface {
	// Start begins the stage name (ending any stage before it).
	Start(stage string)
	// Expect says what the current stage counts (unit) and how many of
	// them it will count (total; 0 when not known in advance). A stage
	// that works in phases says so with another unit: its count starts
	// again (the traces stage hashes every trace, then stores the new).
	Expect(unit string, total int64)
	// Add counts n more items of the current stage done.
	Add(n int64)
	// Done ends the current stage.
	Done()
}

// Expect tells Progress, when set, what the current stage counts.
func (d *Deps) Expect(unit string, total int64) {
	if d.Progress != nil {
		d.Progress.Expect(unit, total)
	}
}

// Advance counts n more items of the current stage on Progress, when set.
func (d *Deps) Advance(n int64) {
	if d.Progress != nil {
		d.Progress.Add(n)
	}
}
