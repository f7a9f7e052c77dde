// Package overrides holds the audited run-override ledger: runs, attempts
// and benchmark points that must never be ingested, and corrected run
// conclusions. The ledger is a data file embedded in the binary; operators
// add to it with extra files of the same shape.
package overrides

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
	"github.com/inferencex/ingest/schema"
)

//go:embed overrides.json
var embedded []byte

// PurgedRun removes a whole run, or some of its attempts.
type PurgedRun struct {
	RunID int64 `json:"runId"`
	// Attempts limits the purge to these attempts; empty means every attempt.
	Attempts []int  `json:"attempts,omitempty"`
	Reason   string `json:"reason"`
	// shipped: only the embedded ledger names the entry (see
	// schema.OverrideRun.Shipped).
	shipped bool
}

// PurgedPoint removes one benchmark point of one run. Attempt 0 matches
// every attempt. A nil recipe fingerprint matches only rows without one.
type PurgedPoint struct {
	RunID   int64 `json:"runId"`
	Attempt int   `json:"attempt,omitempty"`
	PointFields
	Reason string `json:"reason"`
	// shipped: only the embedded ledger names the entry.
	shipped bool
}

// PointFields names one benchmark point in an override entry: the full
// config and the point's natural key. Its fields sit at the entry's top level
// in the JSON.
type PointFields struct {
	Config            schema.Config `json:"config"`
	BenchmarkType     string        `json:"benchmarkType"`
	ISL               *int          `json:"isl"`
	OSL               *int          `json:"osl"`
	Conc              int           `json:"conc"`
	OffloadMode       string        `json:"offloadMode"`
	RecipeFingerprint *string       `json:"recipeFingerprint"`
}

// Point is the benchmark point the fields name.
func (f PointFields) Point() *schema.BenchmarkPoint {
	return &schema.BenchmarkPoint{Config: f.Config, BenchmarkType: f.BenchmarkType, ISL: f.ISL, OSL: f.OSL,
		Conc: f.Conc, OffloadMode: f.OffloadMode, RecipeFingerprint: f.RecipeFingerprint}
}

// ConclusionOverride corrects the conclusion GitHub reports for a run.
type ConclusionOverride struct {
	RunID      int64  `json:"runId"`
	Conclusion string `json:"conclusion"`
	Reason     string `json:"reason"`
}

type file struct {
	PurgedRuns          []PurgedRun          `json:"purgedRuns"`
	PurgedRunAttempts   []PurgedRun          `json:"purgedRunAttempts"`
	PurgedPoints        []PurgedPoint        `json:"purgedPoints"`
	ConclusionOverrides []ConclusionOverride `json:"conclusionOverrides"`
	// ChangelogBackfills and BenchmarkPointBackfills correct stored
	// values (backfills.go).
	ChangelogBackfills      []ChangelogBackfill `json:"changelogBackfills"`
	BenchmarkPointBackfills []PointBackfill     `json:"benchmarkPointBackfills"`
	// CoverageLossAccepted acknowledges deliberate coverage losses
	// (coverage.go).
	CoverageLossAccepted []CoverageLossAccepted `json:"coverageLossAccepted"`
}

// Overrides is the loaded, validated ledger. It is immutable.
type Overrides struct {
	runs        map[int64]PurgedRun
	points      map[pointKey]PurgedPoint
	conclusions map[int64]string
	retired     []RetiredPoint
	// changelogBackfills and pointBackfills, in ledger order.
	changelogBackfills []ChangelogBackfill
	pointBackfills     []PointBackfill
	// coverage: curve keys whose coverage loss is accepted, by run.
	coverage map[int64][]string
}

type pointKey struct {
	run     int64
	attempt int
	key     string
}

// Extension is an operator's ledger file of the embedded ledger's shape.
type Extension struct {
	// Name names the file in errors (its path).
	Name string
	Data []byte
}

// Load reads the embedded ledger and then each extension, in order. Every
// file is parsed strictly (strictjson.Decode): exactly one JSON object, no
// trailing data, no duplicate key at any depth, no unknown field. The
// ledger deletes and rewrites production data, so a file that says more
// or other than its one object is refused whole rather than read in part.
func Load(extensions ...Extension) (*Overrides, error) {
	o := &Overrides{runs: map[int64]PurgedRun{}, points: map[pointKey]PurgedPoint{}, conclusions: map[int64]string{},
		coverage: map[int64][]string{}}
	var err error
	if o.retired, err = loadRetired(); err != nil {
		return nil, err
	}
	if err := o.add(embeddedName, embedded); err != nil {
		return nil, err
	}
	for i, e := range extensions {
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("overrides extension %d", i+1)
		}
		if err := o.add(name, e.Data); err != nil {
			return nil, err
		}
	}
	if err := o.validateBackfills(); err != nil {
		return nil, fmt.Errorf("run overrides: %w", err)
	}
	return o, nil
}

var validConclusions = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true,
	"timed_out": true, "action_required": true, "neutral": true, "stale": true}

// embeddedName names the ledger shipped in the binary, in errors and to
// tell its entries from an operator's.
const embeddedName = "embedded overrides.json"

func (o *Overrides) add(name string, data []byte) error {
	var f file
	if err := strictjson.Decode(data, &f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	for _, p := range append(f.PurgedRuns, f.PurgedRunAttempts...) {
		if p.RunID <= 0 {
			return bad("purged run id %d is not positive", p.RunID)
		}
		if strings.TrimSpace(p.Reason) == "" {
			return bad("purged run %d has no reason", p.RunID)
		}
		for _, a := range p.Attempts {
			if a < 1 {
				return bad("purged run %d: attempt %d is not positive", p.RunID, a)
			}
		}
		prev, seen := o.runs[p.RunID]
		if seen && (len(prev.Attempts) == 0 || len(p.Attempts) == 0) {
			return bad("run %d is purged twice", p.RunID)
		}
		if seen {
			p.Attempts = append(append([]int{}, prev.Attempts...), p.Attempts...)
		}
		p.shipped = name == embeddedName && (!seen || prev.shipped)
		o.runs[p.RunID] = p
	}
	for _, p := range f.PurgedPoints {
		if p.RunID <= 0 || p.Conc <= 0 || p.BenchmarkType == "" || p.OffloadMode == "" || p.Config.Model == "" || p.Config.Hardware == "" {
			return bad("purged point of run %d is incomplete (runId, config, benchmarkType, conc, offloadMode are required)", p.RunID)
		}
		if strings.TrimSpace(p.Reason) == "" {
			return bad("purged point of run %d has no reason", p.RunID)
		}
		if p.RecipeFingerprint != nil && *p.RecipeFingerprint == "" {
			return bad("purged point of run %d: recipeFingerprint must be null or non-empty", p.RunID)
		}
		k := pointKey{p.RunID, p.Attempt, p.Point().Key()}
		prev, seen := o.points[k]
		p.shipped = name == embeddedName && (!seen || prev.shipped)
		o.points[k] = p
	}
	for _, c := range f.ConclusionOverrides {
		if c.RunID <= 0 || !validConclusions[c.Conclusion] || strings.TrimSpace(c.Reason) == "" {
			return bad("conclusion override for run %d needs a positive run id, a valid conclusion and a reason", c.RunID)
		}
		o.conclusions[c.RunID] = c.Conclusion
	}
	o.changelogBackfills = append(o.changelogBackfills, f.ChangelogBackfills...)
	o.pointBackfills = append(o.pointBackfills, f.BenchmarkPointBackfills...)
	if err := o.addCoverage(f.CoverageLossAccepted); err != nil {
		return bad("%v", err)
	}
	return nil
}

// RunPurged reports whether a run attempt must not be ingested, and why.
func (o *Overrides) RunPurged(runID int64, attempt int) (string, bool) {
	p, ok := o.runs[runID]
	if !ok {
		return "", false
	}
	if len(p.Attempts) == 0 {
		return p.Reason, true
	}
	for _, a := range p.Attempts {
		if a == attempt {
			return p.Reason, true
		}
	}
	return "", false
}

// PointPurged reports whether a benchmark point of a run attempt is purged.
func (o *Overrides) PointPurged(runID int64, attempt int, p *schema.BenchmarkPoint) (string, bool) {
	if len(o.points) == 0 {
		return "", false
	}
	key := p.Key()
	if pp, ok := o.points[pointKey{runID, attempt, key}]; ok {
		return pp.Reason, true
	}
	if pp, ok := o.points[pointKey{runID, 0, key}]; ok {
		return pp.Reason, true
	}
	return "", false
}

// Conclusion returns the corrected conclusion of a run, if any.
func (o *Overrides) Conclusion(runID int64) (string, bool) {
	c, ok := o.conclusions[runID]
	return c, ok
}
