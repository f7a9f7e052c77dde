package ingest

import (
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/schema"
)

// maxFailures bounds the failure list kept in a summary; the counts in the
// table stay exact beyond it.
const maxFailures = 10000

// tally accumulates what a run's stages observed into its Summary.
type tally struct {
	sum            *schema.Summary
	unmapped       map[string]map[string]struct{}
	unknownMetrics map[string]struct{}
	droppedFails   int
	closed         bool
}

func newTally(sum *schema.Summary) *tally {
	return &tally{sum: sum, unmapped: map[string]map[string]struct{}{}, unknownMetrics: map[string]struct{}{}}
}

func (t *tally) fail(cat schema.Category, artifact, file, reason string) {
	if len(t.sum.Failures) >= maxFailures {
		t.droppedFails++
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

func (t *tally) addUnmapped(kind, value string) {
	set := t.unmapped[kind]
	if set == nil {
		set = map[string]struct{}{}
		t.unmapped[kind] = set
	}
	set[value] = struct{}{}
}

func (t *tally) addUnmappedValues(vals []benchmark.UnmappedValue) {
	for _, v := range vals {
		t.addUnmapped(v.Kind, v.Value)
	}
}

func (t *tally) note(n string) { t.sum.Notes = append(t.sum.Notes, storable(n)) }

// close writes the sets into the summary, sorted. Only the first call
// counts (an ingest whose commit fails is closed again as aborted).
func (t *tally) close() {
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
	if t.droppedFails > 0 {
		t.note(plural(t.droppedFails, "further failure was", "further failures were") + " counted but not listed")
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
