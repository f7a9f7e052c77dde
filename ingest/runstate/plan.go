// Package runstate is the shared state of one run, below every stage: the
// plan (artifact classification and attempt order), the ledger's artifact
// records, the tally the stages report into, what the benchmark stage noted
// for the traces stage, the run's changelog, and the Env the stages see.
// It imports no stage and not the pipeline.
package runstate

import (
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/ingest/source"
)

// Kind is what the pipeline does with an artifact.
type Kind int

const (
	KindOther     Kind = iota
	KindPerJob         // bmk_* and bmk_agentic_*: per-job benchmark files
	KindAggregate      // results_*: the collected agg_bmk.json
	KindRunStats       // run-stats
	// Artifacts of the stages after the benchmark rows.
	KindEval          // eval_<…>: one per-config eval directory
	KindEvalAggregate // eval_results_*: agg_eval_all.json
	KindChangelog     // changelog-metadata
	KindReuse         // reused-ingest-metadata
	KindAgenticRaw    // agentic_<RF>: the raw AgentX sibling (traces, telemetry)
	KindServerLogs    // server_logs_<RF>, multinode_server_logs_<RF>
	KindGPUMetrics    // gpu_metrics_<RF>
	KindPowerAudit    // power_audit_<RF>
	KindPowerManifest // required-power-sweep-manifest
	KindRejectedRows  // rejected_rows_<p>, rejected_rows_eval_<p>: the producer's quarantined rows
	// numKinds follows the last kind: a test checks each has a rule.
	numKinds
)

// kindRule recognises the artifacts of one kind by name: an exact name,
// a prefix, or a test of its own.
type kindRule struct {
	kind     Kind
	names    []string
	prefixes []string
	match    func(name string) bool
}

func (r kindRule) matches(name string) bool {
	if r.match != nil && r.match(name) {
		return true
	}
	for _, n := range r.names {
		if name == n {
			return true
		}
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// kindRules is where artifact kinds are listed: the first rule that
// matches an artifact's name gives its kind (so a narrower prefix comes
// before a wider one); an artifact no rule matches is KindOther. A new
// kind is a constant above and one rule here; its stage asks the plan for
// its artifacts (Plan.Artifacts).
var kindRules = []kindRule{
	{kind: KindRejectedRows, match: quarantine.IsList},
	{kind: KindPerJob, prefixes: []string{"bmk_"}},
	{kind: KindAggregate, prefixes: []string{"results_"}},
	{kind: KindRunStats, names: []string{"run-stats", "run_stats"}, prefixes: []string{"run-stats_", "run_stats_"}},
	{kind: KindEvalAggregate, prefixes: []string{"eval_results_"}},
	// They cover an eval job, not a point: not ingested.
	{kind: KindOther, prefixes: []string{"eval_server_logs_", "eval_gpu_metrics_"}},
	{kind: KindEval, prefixes: []string{"eval_"}},
	{kind: KindChangelog, names: []string{"changelog-metadata"}},
	{kind: KindReuse, names: []string{"reused-ingest-metadata"}},
	{kind: KindAgenticRaw, prefixes: []string{"agentic_"}},
	{kind: KindServerLogs, prefixes: []string{"server_logs_", "multinode_server_logs_"}},
	{kind: KindGPUMetrics, prefixes: []string{"gpu_metrics_"}},
	{kind: KindPowerAudit, prefixes: []string{"power_audit_"}},
	{kind: KindPowerManifest, names: []string{"required-power-sweep-manifest"}},
}

// Classify says what the pipeline does with an artifact, by its name.
func Classify(name string) Kind {
	for _, r := range kindRules {
		if r.matches(name) {
			return r.kind
		}
	}
	return KindOther
}

// Plan is the ordered work of a run.
type Plan struct {
	// Benchmark lists per-job artifacts first, then aggregates; each group
	// newest attempt first. Rank is the position within its group.
	Benchmark []Planned
	RunStats  []*source.Artifact
	// other holds the artifacts of the later stages by kind, each list in
	// name order, then newest upload first (same-name re-uploads).
	other map[Kind][]*source.Artifact
	// Inferred is true when no listing told the upload order.
	Inferred bool
	// Unlisted counts benchmark artifacts the listing does not name.
	Unlisted int
}

// Artifacts are the tree's artifacts of one later-stage kind, in name
// order (never listing or directory order).
func (p Plan) Artifacts(k Kind) []*source.Artifact { return p.other[k] }

// Planned is one benchmark artifact of the plan.
type Planned struct {
	Artifact  *source.Artifact
	Aggregate bool
	Rank      int
}

// NewPlan classifies the tree's artifacts and orders retries. With a
// listing, newer uploads (created_at, then id) come first; without one the
// order is inferred from the newest file modification time inside each
// artifact (upload-artifact keeps them), then the name. Directory listing
// order never matters.
func NewPlan(tree *source.Tree) Plan {
	var p Plan
	p.Inferred = !tree.HasListing
	p.other = map[Kind][]*source.Artifact{}
	var perJob, agg []*source.Artifact
	for _, a := range tree.Artifacts {
		switch k := Classify(a.Name); k {
		case KindPerJob:
			perJob = append(perJob, a)
		case KindAggregate:
			agg = append(agg, a)
		case KindRunStats:
			p.RunStats = append(p.RunStats, a)
		case KindOther:
		default:
			p.other[k] = append(p.other[k], a)
		}
	}
	for _, arts := range p.other {
		sort.SliceStable(arts, func(i, j int) bool {
			if arts[i].Name != arts[j].Name {
				return arts[i].Name < arts[j].Name
			}
			return orderKeyOf(arts[i], false).newerThan(orderKeyOf(arts[j], false))
		})
	}
	for _, group := range []struct {
		arts      []*source.Artifact
		aggregate bool
	}{{perJob, false}, {agg, true}} {
		keys := make(map[*source.Artifact]orderKey, len(group.arts))
		for _, a := range group.arts {
			k := orderKeyOf(a, p.Inferred)
			if !p.Inferred && !k.listed {
				p.Unlisted++
			}
			keys[a] = k
		}
		sorted := append([]*source.Artifact(nil), group.arts...)
		sort.SliceStable(sorted, func(i, j int) bool { return keys[sorted[i]].newerThan(keys[sorted[j]]) })
		for i, a := range sorted {
			p.Benchmark = append(p.Benchmark, Planned{Artifact: a, Aggregate: group.aggregate, Rank: i})
		}
	}
	return p
}

// Newer reports whether a was uploaded after b, in the order NewPlan gives
// retries: listed before unlisted, then newest upload, then larger id,
// then name; when inferred, by the newest file modification time.
func Newer(a, b *source.Artifact, inferred bool) bool {
	return orderKeyOf(a, inferred).newerThan(orderKeyOf(b, inferred))
}

type orderKey struct {
	listed bool
	at     time.Time
	id     int64
	name   string
}

// newerThan orders listed artifacts before unlisted ones, then newest
// first, then larger id, then name.
func (k orderKey) newerThan(o orderKey) bool {
	if k.listed != o.listed {
		return k.listed
	}
	if !k.at.Equal(o.at) {
		return k.at.After(o.at)
	}
	if k.id != o.id {
		return k.id > o.id
	}
	return k.name < o.name
}

func orderKeyOf(a *source.Artifact, inferred bool) orderKey {
	k := orderKey{name: a.Name}
	if !inferred {
		if a.Listing != nil {
			k.listed, k.at, k.id = true, a.Listing.CreatedAt, a.Listing.ID
		}
		return k
	}
	k.listed = true
	k.at = newestFileTime(a)
	return k
}

// newestFileTime is the latest modification time of the artifact's
// top-level JSON files; zero when none can be read.
func newestFileTime(a *source.Artifact) time.Time {
	var newest time.Time
	fsys, err := a.FS() // loads the artifact

	if err != nil {
		return newest
	}
	defer a.Release() // a run can hold thousands of artifacts: keep none open
	for _, f := range JSONFiles(a) {
		if info, err := fs.Stat(fsys, f); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest
}

// JSONFiles are the JSON files at the root of an artifact, in name order.
func JSONFiles(a *source.Artifact) []string {
	var out []string
	for _, f := range a.Files {
		if !strings.Contains(f, "/") && strings.EqualFold(path.Ext(f), ".json") {
			out = append(out, f)
		}
	}
	return out
}

// BenchmarkFiles are the JSON files of a benchmark artifact at any depth,
// in path order (the producer's collector loads every *.json of a bmk_*
// artifact recursively), and the artifact's other files, which hold no
// rows.
func BenchmarkFiles(a *source.Artifact) (jsonFiles, others []string) {
	for _, f := range a.Files {
		if strings.EqualFold(path.Ext(f), ".json") {
			jsonFiles = append(jsonFiles, f)
		} else {
			others = append(others, f)
		}
	}
	sort.Strings(jsonFiles)
	sort.Strings(others)
	return jsonFiles, others
}
