package schema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// OverridePointBackfill is an audited correction of one benchmark point of
// one run attempt: Point is the point's identity before the correction
// (its OffloadMode is the source offload mode), Set the change. A
// PreviousSet is an earlier version of the same correction, already
// applied to stored data, that this one extends. ExpectedMetrics, when
// set, are scalar metric values the point must still carry for the
// correction to apply (the audited measurement it rests on).
type OverridePointBackfill struct {
	ID              string
	Reason          string
	RunID           int64
	Attempt         int
	Point           BenchmarkPoint
	Set             PointPatch
	PreviousSet     *PointPatch
	ExpectedMetrics map[string]any
}

// PointPatch is what a point backfill changes: the offload mode (empty:
// unchanged; it sets both the column and metrics.offload_mode), top-level
// metric keys removed, then metric values merged (shallow).
type PointPatch struct {
	OffloadMode   string
	MetricsMerge  map[string]any
	MetricsRemove []string
}

// DesiredOffloadMode is the offload mode the point has once corrected.
func (b OverridePointBackfill) DesiredOffloadMode() string {
	if b.Set.OffloadMode != "" {
		return b.Set.OffloadMode
	}
	return b.Point.OffloadMode
}

// Desired is the point's identity once corrected.
func (b OverridePointBackfill) Desired() BenchmarkPoint {
	p := b.Point
	p.OffloadMode = b.DesiredOffloadMode()
	return p
}

// patchValues are the metric values the patch sets, offload_mode
// included when it changes the offload mode.
func (p PointPatch) patchValues() map[string]any {
	out := maps.Clone(p.MetricsMerge)
	if out == nil {
		out = map[string]any{}
	}
	if p.OffloadMode != "" {
		out["offload_mode"] = p.OffloadMode
	}
	return out
}

// ExpectedMetricsMatch reports whether metrics carry every expected value.
func (b OverridePointBackfill) ExpectedMetricsMatch(metrics map[string]any) bool {
	for k, want := range b.ExpectedMetrics {
		got, ok := metrics[k]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}

// applied reports whether a stored row (offload mode and metrics) already
// carries patch p of b.
func (b OverridePointBackfill) applied(offloadMode string, metrics map[string]any, p PointPatch) bool {
	desired := b.Point.OffloadMode
	if p.OffloadMode != "" {
		desired = p.OffloadMode
	}
	if offloadMode != desired || metrics == nil {
		return false
	}
	for k, v := range p.patchValues() {
		got, ok := metrics[k]
		if !ok || !reflect.DeepEqual(got, v) {
			return false
		}
	}
	for _, k := range p.MetricsRemove {
		if _, ok := metrics[k]; ok {
			return false
		}
	}
	return true
}

// PlanStoredRow is the correction of a stored row: the row's offload mode
// and metrics (nil when the stored metrics are not a JSON object) in, the
// corrected metrics out, or nil when the row already carries the
// correction. The caller has found exactly one stored row under the
// source or the desired identity. It refuses a row whose audited metrics
// changed, and a row already under the desired identity that carries
// neither this correction nor its previous version (an unrelated point
// the correction would overwrite).
func (b OverridePointBackfill) PlanStoredRow(offloadMode string, metrics map[string]any) (map[string]any, error) {
	if !b.ExpectedMetricsMatch(metrics) {
		return nil, fmt.Errorf("point backfill %s: the stored metrics differ from the audited measurement it rests on", b.ID)
	}
	if b.applied(offloadMode, metrics, b.Set) {
		return nil, nil
	}
	desired := b.DesiredOffloadMode()
	previous := b.PreviousSet != nil && b.applied(offloadMode, metrics, *b.PreviousSet)
	if offloadMode == desired && desired != b.Point.OffloadMode && !previous {
		return nil, fmt.Errorf("point backfill %s: no stored row has the source identity (offload %s), and the row under the desired identity (offload %s) holds other data",
			b.ID, b.Point.OffloadMode, desired)
	}
	if metrics == nil {
		return nil, fmt.Errorf("point backfill %s: the stored metrics are not a JSON object", b.ID)
	}
	return b.patched(metrics), nil
}

// patched is metrics with the patch applied: removals, then the merge.
func (b OverridePointBackfill) patched(metrics map[string]any) map[string]any {
	out := maps.Clone(metrics)
	for _, k := range b.Set.MetricsRemove {
		delete(out, k)
	}
	maps.Copy(out, b.Set.patchValues())
	return out
}

// ApplyTo corrects a point read from an artifact (its identity must be
// Point's): offload mode and metrics. It reports false, leaving the point
// alone, when the point's metrics no longer carry the expected values.
func (b OverridePointBackfill) ApplyTo(p *BenchmarkPoint) bool {
	if !b.ExpectedMetricsMatch(p.Metrics) {
		return false
	}
	if p.Metrics == nil {
		p.Metrics = map[string]any{}
	}
	p.Metrics = b.patched(p.Metrics)
	p.OffloadMode = b.DesiredOffloadMode()
	return true
}

// OverrideChangelogBackfill is an audited correction of the stored
// changelog of one run attempt, named by its base and head refs. Set
// fields that are nil are left alone.
type OverrideChangelogBackfill struct {
	ID         string
	Reason     string
	RunID      int64
	Attempt    int
	BaseRef    string
	HeadRef    string
	ConfigKeys []string
	// Description and PRLink: nil leaves them; PRLinkSet with a nil
	// PRLink clears the link.
	Description *string
	PRLink      *string
	PRLinkSet   bool
	AppendOnly  *bool
}

// ApplyTo corrects the entries of one changelog (base and head refs must
// be the backfill's), as the reference keeps them: append_only on every
// entry, the other fields on the last one (the entry the reference
// stores). It returns how many entries changed.
func (b OverrideChangelogBackfill) ApplyTo(rows []ChangelogRow) int {
	changed := 0
	for i := range rows {
		r := &rows[i]
		before := *r
		if b.AppendOnly != nil {
			r.AppendOnly = *b.AppendOnly
		}
		if i == len(rows)-1 {
			if b.ConfigKeys != nil {
				r.ConfigKeys = slices.Clone(b.ConfigKeys)
			}
			if b.Description != nil {
				r.Description = *b.Description
			}
			if b.PRLinkSet {
				r.PRLink = b.PRLink
			}
		}
		if !SameChangelogFields(*r, before) {
			changed++
		}
	}
	return changed
}

// SameChangelogFields reports whether two entries agree on every field a
// changelog backfill sets.
func SameChangelogFields(a, b ChangelogRow) bool {
	return a.AppendOnly == b.AppendOnly && slices.Equal(a.ConfigKeys, b.ConfigKeys) && a.Description == b.Description &&
		equalOptString(a.PRLink, b.PRLink)
}

func equalOptString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
