package compare

import (
	"regexp"
	"strings"

	"github.com/inferencex/ingest/ingest/trace"
)

// Rule is a documented difference between what our ingest writes and what
// the reference's wrote. Anchor is its section in docs/operations.md.
type Rule struct {
	Name   string
	Anchor string
	// Summary is one line for the report.
	Summary string
	match   func(d *Difference, ours, db side) bool
}

const rulesDoc = "docs/operations.md#"

// Rules are the differences a compare against a reference database
// explains, in the order they are tried: the one list, each rule with its
// section under "Comparing with the reference ingest" in
// docs/operations.md. Against a database of ours no rule applies: every
// difference there is unexplained.
func Rules() []Rule {
	return []Rule{
		{"changelog-one-row-per-entry", "rule-changelog-one-row-per-entry",
			"we keep every changelog entry; the reference one row per refs (the last entry)", matchChangelog},
		{"agentx-server-metrics", "rule-agentx-server-metrics",
			"AgentX server metrics are derived by us, the producer's kept as published_<key>", matchServerMetrics},
		{"newest-upload-wins", "rule-newest-upload-wins",
			"of a point's copies in the tree we keep the newest upload's, the reference the last written", matchDuplicatePoint},
		{"recipe-fingerprint-not-a-metric", "rule-recipe-fingerprint-not-a-metric",
			"recipe_fingerprint is a column of ours, never a metrics key", matchFingerprint},
		{"string-metrics-kept", "rule-string-metrics-kept",
			"we keep the producer's few string metrics (router_name, …); the reference keeps numbers only", matchStringMetric},
		{"evals-under-artifact-config", "rule-evals-under-artifact-config",
			"an eval row is stored under the configuration its artifact names", matchEvalConfig},
		{"eval-samples-one-per-doc", "rule-eval-samples-one-per-doc",
			"we keep a sample per (document, filter); the reference one per document (the last line)", matchSampleFilter},
		{"run-stats-per-gpu", "rule-run-stats-per-gpu",
			"we key run stats by cluster; the reference by GPU", matchRunStats},
		{"server-log-primary-only", "rule-server-log-primary-only",
			"before its 013 the reference keeps only a server log's primary file", matchLogPrimaryOnly},
		{"older-aiperf-layout", "rule-older-aiperf-layout",
			"a trace in the older aiperf_artifacts/run_0/ layout: we link it, the reference finds none", matchNestedLayout},
		{"reference-gpu-count", "rule-reference-gpu-count",
			"the reference counts a config's GPUs as tp x ep where we count the devices: the same point under two configs", matchGPUCount},
		{"multinode-server-logs", "rule-multinode-server-logs",
			"the reference reads server_logs_ artifacts only: a multinode_server_logs_ bundle's files are ours alone", matchMultinodeLogs},
		{"batched-eval-files", "rule-batched-eval-files",
			"an eval artifact with a results file per concurrency: the reference reads one of them and none of its samples", matchBatchedEval},
	}
}

// classify names the rule explaining d, or Unexplained.
func classify(d *Difference, ours, db side, schemaKind string) string {
	if schemaKind != SchemaReference {
		return Unexplained
	}
	for _, r := range Rules() {
		if r.match(d, ours, db) {
			return r.Name
		}
	}
	return Unexplained
}

// hasGroup reports whether rows of table hold one of group other than key.
func hasGroup(rows map[string]*row, group, key string) bool {
	for k, r := range rows {
		if k != key && r.group == group {
			return true
		}
	}
	return false
}

// matchChangelog: an entry of ours the reference's one row per refs does
// not hold, where it holds a row of the same refs.
func matchChangelog(d *Difference, ours, db side) bool {
	if d.Table != TableChangelog || d.Kind != OnlyOurs {
		return false
	}
	return hasGroup(db[TableChangelog], ours[TableChangelog][d.Key].group, d.Key)
}

// matchServerMetrics: on an AgentX row, the published_<key> copies and the
// server_metrics_version marker only ours writes, and a key whose value we
// derived where the reference stored the producer's.
func matchServerMetrics(d *Difference, ours, _ side) bool {
	if d.Table != TableBenchmarks || d.Kind != Different {
		return false
	}
	o := ours[TableBenchmarks][d.Key]
	if !o.agentx {
		return false
	}
	key, ok := strings.CutPrefix(d.Field, "metrics.")
	if !ok {
		return false
	}
	if d.DB == nil && (strings.HasPrefix(key, "published_") || key == "server_metrics_version") {
		return true
	}
	pub, has := o.values["metrics.published_"+key]
	// The reference stored the producer's value, or one it read from the
	// server log itself (kv_cache_pool_tokens); ours is derived and the
	// producer's kept as published_<key>.
	return has && (d.DB == pub || d.Ours == nil)
}

// matchDuplicatePoint: a value of a point the tree holds more than once.
func matchDuplicatePoint(d *Difference, ours, _ side) bool {
	return d.Table == TableBenchmarks && d.Kind == Different && ours[TableBenchmarks][d.Key].copies > 1
}

func matchFingerprint(d *Difference, _, _ side) bool {
	return d.Table == TableBenchmarks && d.Kind == Different && d.Field == "metrics.recipe_fingerprint"
}

func matchStringMetric(d *Difference, _, _ side) bool {
	if d.Table != TableBenchmarks || d.Kind != Different || d.DB != nil || !strings.HasPrefix(d.Field, "metrics.") {
		return false
	}
	_, isString := d.Ours.(string)
	return isString
}

// matchEvalConfig: an eval row (or a sample of it) one side holds under a
// configuration where the other holds the same model, task and sequence
// under another.
func matchEvalConfig(d *Difference, ours, db side) bool {
	this, other := ours, db
	if d.Kind == OnlyDB {
		this, other = db, ours
	}
	switch {
	case d.Kind == Different:
		return false
	case d.Table == TableEvals:
		r := this[TableEvals][d.Key]
		return hasGroup(other[TableEvals], r.group, d.Key)
	case d.Table == TableEvalSamples:
		eval := this[TableEvalSamples][d.Key].group
		if _, both := other[TableEvals][eval]; both {
			return false
		}
		r := this[TableEvals][eval]
		return r != nil && hasGroup(other[TableEvals], r.group, eval)
	}
	return false
}

// matchSampleFilter: a (document, filter) sample of ours where the
// reference holds the document's one row under another filter.
func matchSampleFilter(d *Difference, ours, db side) bool {
	if d.Table != TableEvalSamples || d.Kind != OnlyOurs {
		return false
	}
	doc := strings.TrimSuffix(d.Key, d.Key[strings.LastIndex(d.Key, " filter="):])
	for k := range db[TableEvalSamples] {
		if strings.HasPrefix(k, doc+" filter=") {
			return true
		}
	}
	return false
}

// matchRunStats: a cluster's row of ours where the reference holds its
// GPU's, and the reference's GPU row where ours holds its clusters'.
func matchRunStats(d *Difference, ours, db side) bool {
	if d.Table != TableRunStats {
		return false
	}
	switch d.Kind {
	case OnlyOurs:
		// The reference reads the GPU keys of a run-stats file only: one
		// keyed by cluster leaves it no row of that cluster.
		o := ours[TableRunStats][d.Key]
		_, ok := db[TableRunStats][o.group]
		return ok || d.Key != o.group
	case OnlyDB:
		return hasGroup(ours[TableRunStats], d.Key, "")
	}
	return false
}

// matchLogPrimaryOnly: a non-primary file of a row's server log where the
// database keeps that row's primary file alone.
func matchLogPrimaryOnly(d *Difference, ours, db side) bool {
	if d.Table != TableServerLogs || d.Kind != OnlyOurs {
		return false
	}
	o := ours[TableServerLogs][d.Key]
	if o.primary {
		return false
	}
	for _, r := range db[TableServerLogs] {
		if r.group == o.group && r.primaryOnly {
			return true
		}
	}
	return false
}

// matchNestedLayout: a trace only ours links, read from the older AIPerf
// layout (one more directory, aiperf_artifacts/run_0/), to a row the
// database holds: the reference looks for the files directly in
// aiperf_artifacts/ and trace_replay/ only.
func matchNestedLayout(d *Difference, ours, db side) bool {
	if d.Table != TableTraces || d.Kind != OnlyOurs || ours[TableTraces][d.Key].layout != trace.LayoutNested {
		return false
	}
	_, stored := db[TableBenchmarks][d.Key]
	return stored
}

// gpuCount is the GPU counts of a config key (configKey).
var gpuCount = regexp.MustCompile(` gpus=[0-9]+\+[0-9]+`)

// matchGPUCount: a row one side holds where the other holds the same key
// but for the config's GPU counts (a benchmark point, its trace or a file
// of its server log): the reference counts a single-node config's GPUs as
// tp x ep, we the devices the engine runs on (tp x pp x pcp).
func matchGPUCount(d *Difference, ours, db side) bool {
	other := db
	if d.Kind == OnlyDB {
		other = ours
	}
	if d.Kind == Different || !gpuCount.MatchString(d.Key) {
		return false
	}
	want := gpuCount.ReplaceAllString(d.Key, "")
	for k := range other[d.Table] {
		if k != d.Key && gpuCount.ReplaceAllString(k, "") == want {
			return true
		}
	}
	return false
}

// matchMultinodeLogs: a file of a multinode_server_logs_ bundle linked to
// a row whose server log the database does not hold: the reference reads
// the server.log of server_logs_<x> artifacts only.
func matchMultinodeLogs(d *Difference, ours, db side) bool {
	if d.Table != TableServerLogs || d.Kind != OnlyOurs || !ours[TableServerLogs][d.Key].bundle {
		return false
	}
	return !hasGroup(db[TableServerLogs], ours[TableServerLogs][d.Key].group, "")
}

// matchBatchedEval: a value of an eval row we read from a results file
// named with its concurrency, and the samples of such a row where the
// database holds none: the reference reads the first results_ file of an
// eval artifact for all its rows, and finds a samples file by the pattern
// samples_<task>_<time>.jsonl, which a _conc<N> suffix defeats.
func matchBatchedEval(d *Difference, ours, db side) bool {
	switch {
	case d.Table == TableEvals && d.Kind == Different:
		return ours[TableEvals][d.Key].batched
	case d.Table == TableEvalSamples && d.Kind == OnlyOurs:
		eval := ours[TableEvalSamples][d.Key].group
		r := ours[TableEvals][eval]
		return r != nil && r.batched && !hasGroup(db[TableEvalSamples], eval, "")
	}
	return false
}
