package ingest

import (
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/source"
)

// artifactKind is what the pipeline does with an artifact.
type artifactKind int

const (
	kindOther     artifactKind = iota
	kindPerJob                 // bmk_* and bmk_agentic_*: per-job benchmark files
	kindAggregate              // results_*: the collected agg_bmk.json
	kindRunStats               // run-stats
	// Artifacts of the stages after the benchmark rows (docs/artifacts.md §1.2, §1.3).
	kindEval          // eval_<…>: one per-config eval directory
	kindEvalAggregate // eval_results_*: agg_eval_all.json
	kindChangelog     // changelog-metadata
	kindReuse         // reused-ingest-metadata
	kindAgenticRaw    // agentic_<RF>: the raw AgentX sibling (traces, telemetry)
	kindServerLogs    // server_logs_<RF>, multinode_server_logs_<RF>
	kindGPUMetrics    // gpu_metrics_<RF>
	kindPowerAudit    // power_audit_<RF>
	kindPowerManifest // required-power-sweep-manifest
)

func classify(name string) artifactKind {
	switch {
	case strings.HasPrefix(name, "bmk_"):
		return kindPerJob
	case strings.HasPrefix(name, "results_"):
		return kindAggregate
	case name == "run-stats" || name == "run_stats" ||
		strings.HasPrefix(name, "run-stats_") || strings.HasPrefix(name, "run_stats_"):
		return kindRunStats
	case strings.HasPrefix(name, "eval_results_"):
		return kindEvalAggregate
	case strings.HasPrefix(name, "eval_server_logs_"), strings.HasPrefix(name, "eval_gpu_metrics_"):
		return kindOther // they cover an eval job, not a point: not ingested
	case strings.HasPrefix(name, "eval_"):
		return kindEval
	case name == "changelog-metadata":
		return kindChangelog
	case name == "reused-ingest-metadata":
		return kindReuse
	case strings.HasPrefix(name, "agentic_"):
		return kindAgenticRaw
	case strings.HasPrefix(name, "server_logs_"), strings.HasPrefix(name, "multinode_server_logs_"):
		return kindServerLogs
	case strings.HasPrefix(name, "gpu_metrics_"):
		return kindGPUMetrics
	case strings.HasPrefix(name, "power_audit_"):
		return kindPowerAudit
	case name == "required-power-sweep-manifest":
		return kindPowerManifest
	}
	return kindOther
}

// plan is the ordered work of a run.
type plan struct {
	// benchmark lists per-job artifacts first, then aggregates; each group
	// newest attempt first. rank is the position within its group.
	benchmark []plannedArtifact
	runStats  []*source.Artifact
	// other holds the artifacts of the later stages by kind, each list in
	// name order, then newest upload first (same-name re-uploads).
	other map[artifactKind][]*source.Artifact
	// inferred is true when no listing told the upload order.
	inferred bool
	// unlisted counts benchmark artifacts the listing does not name.
	unlisted int
}

// artifacts are the tree's artifacts of one later-stage kind, in name
// order (never listing or directory order).
func (p plan) artifacts(k artifactKind) []*source.Artifact { return p.other[k] }

type plannedArtifact struct {
	artifact  *source.Artifact
	aggregate bool
	rank      int
}

// newPlan classifies the tree's artifacts and orders retries. With a
// listing, newer uploads (created_at, then id) come first; without one the
// order is inferred from the newest file modification time inside each
// artifact (upload-artifact keeps them), then the name. Directory listing
// order never matters.
func newPlan(tree *source.Tree) plan {
	var p plan
	p.inferred = !tree.HasListing
	p.other = map[artifactKind][]*source.Artifact{}
	var perJob, agg []*source.Artifact
	for _, a := range tree.Artifacts {
		switch k := classify(a.Name); k {
		case kindPerJob:
			perJob = append(perJob, a)
		case kindAggregate:
			agg = append(agg, a)
		case kindRunStats:
			p.runStats = append(p.runStats, a)
		case kindOther:
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
			k := orderKeyOf(a, p.inferred)
			if !p.inferred && !k.listed {
				p.unlisted++
			}
			keys[a] = k
		}
		sorted := append([]*source.Artifact(nil), group.arts...)
		sort.SliceStable(sorted, func(i, j int) bool { return keys[sorted[i]].newerThan(keys[sorted[j]]) })
		for i, a := range sorted {
			p.benchmark = append(p.benchmark, plannedArtifact{artifact: a, aggregate: group.aggregate, rank: i})
		}
	}
	return p
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
	for _, f := range jsonFiles(a) {
		if info, err := fs.Stat(fsys, f); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest
}

// jsonFiles are the JSON files at the root of an artifact, in name order.
func jsonFiles(a *source.Artifact) []string {
	var out []string
	for _, f := range a.Files {
		if !strings.Contains(f, "/") && strings.EqualFold(path.Ext(f), ".json") {
			out = append(out, f)
		}
	}
	return out
}
