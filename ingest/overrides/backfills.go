package overrides

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// ChangelogBackfill corrects the stored changelog of one run attempt,
// named by its base and head refs. Set is a partial patch.
type ChangelogBackfill struct {
	ID      string       `json:"id"`
	Reason  string       `json:"reason"`
	RunID   int64        `json:"runId"`
	Attempt int          `json:"attempt"`
	BaseRef string       `json:"baseRef"`
	HeadRef string       `json:"headRef"`
	Set     changelogSet `json:"set"`
}

type changelogSet struct {
	ConfigKeys  []string       `json:"configKeys,omitempty"`
	Description *string        `json:"description,omitempty"`
	PRLink      optionalString `json:"prLink"`
	AppendOnly  *bool          `json:"appendOnly,omitempty"`
}

// optionalString tells an absent key (leave the value) from null (clear it).
type optionalString struct {
	set   bool
	value *string
}

func (o *optionalString) UnmarshalJSON(b []byte) error {
	o.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	o.value = &s
	return nil
}

// PointBackfill corrects one benchmark point of one run attempt. The
// point fields name it as stored before the correction.
type PointBackfill struct {
	ID      string `json:"id"`
	Reason  string `json:"reason"`
	RunID   int64  `json:"runId"`
	Attempt int    `json:"attempt"`
	PointFields
	ExpectedMetrics map[string]any `json:"expectedMetrics,omitempty"`
	PreviousSet     *pointSet      `json:"previousSet,omitempty"`
	Set             pointSet       `json:"set"`
}

type pointSet struct {
	OffloadMode   string         `json:"offloadMode,omitempty"`
	MetricsMerge  map[string]any `json:"metricsMerge,omitempty"`
	MetricsRemove []string       `json:"metricsRemove,omitempty"`
}

func (s pointSet) patch() schema.PointPatch {
	return schema.PointPatch{OffloadMode: s.OffloadMode, MetricsMerge: s.MetricsMerge, MetricsRemove: s.MetricsRemove}
}

func (b PointBackfill) backfill() schema.OverridePointBackfill {
	out := schema.OverridePointBackfill{ID: b.ID, Reason: b.Reason, RunID: b.RunID, Attempt: b.Attempt, Point: *b.Point(),
		Set: b.Set.patch(), ExpectedMetrics: b.ExpectedMetrics}
	if b.PreviousSet != nil {
		p := b.PreviousSet.patch()
		out.PreviousSet = &p
	}
	return out
}

func (b ChangelogBackfill) backfill() schema.OverrideChangelogBackfill {
	return schema.OverrideChangelogBackfill{ID: b.ID, Reason: b.Reason, RunID: b.RunID, Attempt: b.Attempt,
		BaseRef: b.BaseRef, HeadRef: b.HeadRef, ConfigKeys: b.Set.ConfigKeys, Description: b.Set.Description,
		PRLink: b.Set.PRLink.value, PRLinkSet: b.Set.PRLink.set, AppendOnly: b.Set.AppendOnly}
}

var kebab = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// validateBackfills checks every backfill of the ledger as the reference
// does, once all files are loaded: stable kebab-case ids, reasons, exact
// selectors, non-empty patches, runs and points not purged, and no two
// corrections whose selectors or corrected identities collide.
func (o *Overrides) validateBackfills() error {
	ids := map[string]bool{}
	check := func(id, reason string, run int64, attempt int) error {
		if !kebab.MatchString(id) {
			return fmt.Errorf("backfill %q: id must be lowercase kebab-case", id)
		}
		if ids[id] {
			return fmt.Errorf("duplicate backfill id %s", id)
		}
		ids[id] = true
		if strings.TrimSpace(reason) == "" {
			return fmt.Errorf("backfill %s: reason must not be empty", id)
		}
		if run <= 0 || attempt <= 0 {
			return fmt.Errorf("backfill %s: runId and attempt must be positive integers", id)
		}
		if _, purged := o.RunPurged(run, attempt); purged {
			return fmt.Errorf("backfill %s: run %d attempt %d is purged by the ledger", id, run, attempt)
		}
		return nil
	}
	changelogs := map[string]string{}
	for _, b := range o.changelogBackfills {
		if err := check(b.ID, b.Reason, b.RunID, b.Attempt); err != nil {
			return err
		}
		if b.BaseRef == "" || b.HeadRef == "" {
			return fmt.Errorf("backfill %s: baseRef and headRef must not be empty", b.ID)
		}
		s := b.Set
		if s.ConfigKeys == nil && s.Description == nil && !s.PRLink.set && s.AppendOnly == nil {
			return fmt.Errorf("backfill %s: set must change at least one field", b.ID)
		}
		if slices.Contains(s.ConfigKeys, "") {
			return fmt.Errorf("backfill %s: configKeys must not contain empty values", b.ID)
		}
		sel := fmt.Sprintf("run %d attempt %d %s..%s", b.RunID, b.Attempt, b.BaseRef, b.HeadRef)
		if other, dup := changelogs[sel]; dup {
			return fmt.Errorf("backfill %s: duplicate changelog selector (%s, also %s)", b.ID, sel, other)
		}
		changelogs[sel] = b.ID
	}
	sources, desired := map[string]string{}, map[string]string{}
	for _, b := range o.pointBackfills {
		if err := check(b.ID, b.Reason, b.RunID, b.Attempt); err != nil {
			return err
		}
		if err := b.validate(); err != nil {
			return err
		}
		sb := b.backfill()
		src, dst := b.selector(sb.Point), b.selector(sb.Desired())
		if other, dup := sources[src]; dup {
			return fmt.Errorf("backfill %s: duplicate benchmark point selector (also %s)", b.ID, other)
		}
		sources[src] = b.ID
		if other, dup := desired[dst]; dup {
			return fmt.Errorf("backfill %s: the corrected point identity collides with backfill %s", b.ID, other)
		}
		desired[dst] = b.ID
		for _, p := range []schema.BenchmarkPoint{sb.Point, sb.Desired()} {
			if _, purged := o.PointPurged(b.RunID, b.Attempt, &p); purged {
				return fmt.Errorf("backfill %s: its source or corrected point is purged by the ledger", b.ID)
			}
		}
	}
	for dst, by := range desired {
		if sel, ok := sources[dst]; ok && sel != by {
			return fmt.Errorf("backfill %s: the corrected point identity collides with the selector of backfill %s", by, sel)
		}
	}
	return nil
}

func (b PointBackfill) selector(p schema.BenchmarkPoint) string {
	return fmt.Sprintf("%d/%d/%s", b.RunID, b.Attempt, p.Key())
}

func (b PointBackfill) validate() error {
	c := b.Config
	if c.Hardware == "" || c.Framework == "" || c.Model == "" || c.Precision == "" || c.SpecMethod == "" {
		return fmt.Errorf("backfill %s: config hardware, framework, model, precision and spec_method must not be empty", b.ID)
	}
	for _, n := range []int{c.PrefillTP, c.PrefillEP, c.DecodeTP, c.DecodeEP, c.NumPrefillGPU, c.NumDecodeGPU} {
		if n <= 0 {
			return fmt.Errorf("backfill %s: config parallelism and GPU counts must be positive", b.ID)
		}
	}
	if c.PrefillNumWorkers < 0 || c.DecodeNumWorkers < 0 {
		return fmt.Errorf("backfill %s: config worker counts must not be negative", b.ID)
	}
	if b.Conc <= 0 || b.BenchmarkType == "" || b.OffloadMode == "" {
		return fmt.Errorf("backfill %s: conc, benchmarkType and offloadMode are required", b.ID)
	}
	if (b.ISL != nil && *b.ISL <= 0) || (b.OSL != nil && *b.OSL <= 0) {
		return fmt.Errorf("backfill %s: isl and osl must be null or positive", b.ID)
	}
	if b.RecipeFingerprint != nil && *b.RecipeFingerprint == "" {
		return fmt.Errorf("backfill %s: recipeFingerprint must be null or non-empty", b.ID)
	}
	for k, v := range b.ExpectedMetrics {
		switch v.(type) {
		case float64, string, bool:
		default:
			return fmt.Errorf("backfill %s: expectedMetrics.%s must be a number, string or boolean", b.ID, k)
		}
	}
	if p := b.PreviousSet; p != nil {
		if p.OffloadMode == "" || p.OffloadMode != b.Set.OffloadMode || p.OffloadMode == b.OffloadMode || len(p.MetricsMerge) == 0 {
			return fmt.Errorf("backfill %s: previousSet must identify the prior destination patch", b.ID)
		}
		if err := (PointBackfill{ID: b.ID, PointFields: b.PointFields, Set: *p}).validateSet(); err != nil {
			return err
		}
	}
	return b.validateSet()
}

func (b PointBackfill) validateSet() error {
	s := b.Set
	if s.OffloadMode == "" && len(s.MetricsMerge) == 0 && len(s.MetricsRemove) == 0 {
		return fmt.Errorf("backfill %s: set must change at least one field", b.ID)
	}
	if s.OffloadMode != "" && s.OffloadMode != "on" && s.OffloadMode != "off" {
		return fmt.Errorf("backfill %s: set.offloadMode must be on or off", b.ID)
	}
	if _, ok := s.MetricsMerge["offload_mode"]; ok || slices.Contains(s.MetricsRemove, "offload_mode") {
		return fmt.Errorf("backfill %s: use set.offloadMode to change metrics.offload_mode", b.ID)
	}
	seen := map[string]bool{}
	for _, k := range s.MetricsRemove {
		if k == "" || seen[k] {
			return fmt.Errorf("backfill %s: metricsRemove keys must be unique and non-empty", b.ID)
		}
		seen[k] = true
		if _, ok := s.MetricsMerge[k]; ok {
			return fmt.Errorf("backfill %s: metric %s is both merged and removed", b.ID, k)
		}
	}
	return nil
}

// PointBackfill returns the correction of a point read for a run attempt
// (an attempt of 0 is unknown and matches any), if the ledger has one.
func (o *Overrides) PointBackfill(runID int64, attempt int, p *schema.BenchmarkPoint) (schema.OverridePointBackfill, bool) {
	var key string
	for _, b := range o.pointBackfills {
		if b.RunID != runID || (attempt != 0 && attempt != b.Attempt) {
			continue
		}
		if key == "" {
			key = p.Key()
		}
		if b.Point().Key() == key {
			return b.backfill(), true
		}
	}
	return schema.OverridePointBackfill{}, false
}

// HasPointBackfills reports whether the ledger corrects points of the run.
func (o *Overrides) HasPointBackfills(runID int64) bool {
	for _, b := range o.pointBackfills {
		if b.RunID == runID {
			return true
		}
	}
	return false
}

// ChangelogBackfill returns the correction of a run attempt's changelog
// with these refs (an attempt of 0 matches any), if the ledger has one.
func (o *Overrides) ChangelogBackfill(runID int64, attempt int, baseRef, headRef string) (schema.OverrideChangelogBackfill, bool) {
	for _, b := range o.changelogBackfills {
		if b.RunID == runID && (attempt == 0 || attempt == b.Attempt) && b.BaseRef == baseRef && b.HeadRef == headRef {
			return b.backfill(), true
		}
	}
	return schema.OverrideChangelogBackfill{}, false
}
