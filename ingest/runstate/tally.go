package runstate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/schema"
)

// maxFailures bounds the failure list kept in a summary; the counts in the
// table stay exact beyond it.
const maxFailures = 10000

// Tally accumulates what a run's stages observed into its Summary.
type Tally struct {
	sum            *schema.Summary
	unmapped       map[string]map[string]struct{}
	unknownMetrics map[string]struct{}
	droppedFails   int
	droppedRunless int
	closed         bool
	// writeNotes are the notes that say what the run's transaction wrote
	// (WriteNote): an abort rolls that back, so they are dropped.
	writeNotes map[string]struct{}
}

// NewTally tallies into sum.
func NewTally(sum *schema.Summary) *Tally {
	return &Tally{sum: sum, unmapped: map[string]map[string]struct{}{}, unknownMetrics: map[string]struct{}{}}
}

// Fail lists a failure of category cat; past maxFailures it is counted
// but not listed.
func (t *Tally) Fail(cat schema.Category, artifact, file, reason string) {
	if len(t.sum.Failures) >= maxFailures {
		t.droppedFails++
		if cat == schema.CategoryRun || cat == schema.CategoryEvalSamples {
			t.droppedRunless++
		}
		return
	}
	t.sum.Failures = append(t.sum.Failures, schema.Failure{Category: cat, Artifact: storable(artifact), File: storable(file), Reason: storable(reason)})
}

// storable makes a text from bad input fit the ledger's jsonb: a NUL is
// shown as \x00, invalid UTF-8 as U+FFFD.
func storable(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", `\x00`)
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// AddUnmapped notes a value of kind (model, hardware, …) that no catalog
// entry maps.
func (t *Tally) AddUnmapped(kind, value string) {
	set := t.unmapped[kind]
	if set == nil {
		set = map[string]struct{}{}
		t.unmapped[kind] = set
	}
	set[value] = struct{}{}
}

// AddUnmappedValues notes what the normalizer could not map.
func (t *Tally) AddUnmappedValues(vals []benchmark.UnmappedValue) {
	for _, v := range vals {
		t.AddUnmapped(v.Kind, v.Value)
	}
}

// Note adds a note to the summary.
func (t *Tally) Note(n string) { t.sum.Notes = append(t.sum.Notes, storable(n)) }

// WriteNote adds a note that says what the run's transaction writes or
// changes ("recorded one fallback changelog entry"). It stands only when
// the run commits: DropWriteNotes removes it from an aborted run's
// summary, whose report says that nothing was written.
func (t *Tally) WriteNote(n string) {
	n = storable(n)
	if t.writeNotes == nil {
		t.writeNotes = map[string]struct{}{}
	}
	t.writeNotes[n] = struct{}{}
	t.sum.Notes = append(t.sum.Notes, n)
}

// DropWriteNotes removes the notes added by WriteNote: the run was rolled
// back, so what they claim did not happen.
func (t *Tally) DropWriteNotes() {
	if len(t.writeNotes) == 0 {
		return
	}
	t.sum.Notes = slices.DeleteFunc(t.sum.Notes, func(n string) bool {
		_, ok := t.writeNotes[n]
		return ok
	})
}

// AddUnknownMetric notes a metric the normalizer does not know.
func (t *Tally) AddUnknownMetric(name string) { t.unknownMetrics[name] = struct{}{} }

// Summary is the summary the tally writes into.
func (t *Tally) Summary() *schema.Summary { return t.sum }

// Merge adds o's failures (its listed ones listed again here, subject to
// this tally's bound), its count of unlisted failures, its unmapped values
// and unknown metrics. Counters of o's summary are the caller's to merge.
func (t *Tally) Merge(o *Tally) {
	for _, f := range o.sum.Failures {
		t.Fail(f.Category, f.Artifact, f.File, f.Reason)
	}
	t.droppedFails += o.droppedFails
	t.droppedRunless += o.droppedRunless
	for kind, set := range o.unmapped {
		for v := range set {
			t.AddUnmapped(kind, v)
		}
	}
	for k := range o.unknownMetrics {
		t.unknownMetrics[k] = struct{}{}
	}
}

// Close writes the sets into the summary, sorted. Only the first call
// counts (an ingest whose commit fails is closed again as aborted).
func (t *Tally) Close() {
	if t.closed {
		return
	}
	t.closed = true
	u := &t.sum.Unmapped
	u.Models = sorted(t.unmapped["model"])
	u.Hardware = sorted(t.unmapped["hardware"])
	u.Precisions = sorted(t.unmapped["precision"])
	u.Frameworks = sorted(t.unmapped["framework"])
	u.SpecMethods = sorted(t.unmapped["spec_method"])
	u.Datasets = sorted(t.unmapped["dataset"])
	t.sum.Details.UnknownMetrics = sorted(t.unknownMetrics)
	t.sum.Details.FailuresNotListed = int64(t.droppedFails)
	t.sum.Details.RunFailuresNotListed = int64(t.droppedRunless)
	if t.droppedFails > 0 {
		t.Note(Plural(t.droppedFails, "further failure was", "further failures were") + " counted but not listed")
	}
}

func sorted(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Plural is n followed by one or many, by n: "1 file is", "2 files are".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ListSome joins the first max names of a list, and says how many more
// there are.
func ListSome(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}
