package traces

import (
	"fmt"
	"math"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// serverMetricTolerance is the relative difference above which a published
// server metric disagrees with the derived one (a warning, like power).
const serverMetricTolerance = 0.05

const agenticTracesType = "agentic_traces"

// serverMetrics derives the owned server-metric keys of every AgentX row
// of the run from its point's server_metrics_export.csv and its server
// log's worker startup lines, keeps what the producer published for them
// under published_<key>, and lists the published values the derived ones
// differ from by more than 5 %.
//
// A row this ingest wrote from its point alone (fromMemory) holds the
// derived values already; that it would be written again is an error.
func (s *traceStage) serverMetrics(a *schema.TraceApply) error {
	scrapes := map[int64]trace.Scrape{}
	for _, j := range s.sidecarOrder {
		if j.scrapeProblem != "" && j.failed == "" {
			s.env.Tally.Fail(schema.CategoryRun, j.raw.Name, j.parts[3].path,
				"server_metrics_export.csv unreadable, its rows' server metrics derive without it: "+j.scrapeProblem)
		}
		for _, p := range j.rows {
			if j.failed == "" && j.scrape != nil {
				scrapes[p.RowID] = j.scrape
			}
		}
	}
	logs := map[int64][]trace.LogFileLines{}
	for _, j := range s.logOrder {
		for _, p := range j.rows {
			if j.failed == "" && j.startup != nil {
				logs[p.RowID] = j.startup
			}
		}
	}
	seen := map[string]bool{}
	replaced := trace.ServerMetricsReplaced()
	derivedRows := 0
	var warnings []schema.ServerMetricWarning
	for _, it := range s.items {
		p := it.point
		row, ok := s.rows[p.RowID]
		if it.fromMemory() {
			row, ok = *p.Written, true
		}
		if !ok || seen[string(p.Digest)] || p.BenchmarkType != agenticTracesType {
			continue
		}
		seen[string(p.Digest)] = true
		in := trace.RowInput(row.Config, row.Metrics)
		in.Scrape, in.Logs = scrapes[p.RowID], logs[p.RowID]
		d := trace.DeriveServerMetrics(in)
		out := trace.RowServerMetrics(row.Metrics, d)
		for _, k := range trace.ServerMetricKeys {
			pub, published := out[trace.PublishedPrefix+k]
			v, derived := out[k]
			if published && derived {
				if rel := relDiff(pub, v); rel > serverMetricTolerance {
					warnings = append(warnings, schema.ServerMetricWarning{Artifact: p.Artifact, File: p.File, Field: k,
						Published: pub, Derived: v, RelDiff: rel})
				}
			}
		}
		if d.PoolReason != "" {
			s.env.Log.Debug("AgentX KV-cache pool not derived", zap.String("artifact", p.Artifact), zap.String("file", p.File),
				zap.String("reason", d.PoolReason))
		}
		derivedRows++
		// A row that already holds exactly these values (the benchmarks
		// stage wrote them: its point has neither scrape nor log, or an
		// earlier ingest did) is not written again.
		if !row.OwnedOther && holds(replaced, row.Metrics, out) {
			continue
		}
		if it.fromMemory() {
			return fmt.Errorf("artifact %s: file %s: the server metrics derived again differ from those the benchmarks stage wrote", p.Artifact, p.File)
		}
		a.ServerMetrics = append(a.ServerMetrics, schema.RowServerMetrics{RowID: p.RowID, Metrics: out})
	}
	a.ServerMetricsReplaced = replaced
	s.counts.Details.ServerMetricRows += int64(derivedRows)
	s.counts.Details.ServerMetricDisagreements += int64(len(warnings))
	s.env.Sum.ServerMetricWarnings = append(s.env.Sum.ServerMetricWarnings, warnings...)
	if n := len(warnings); n > 0 {
		s.env.Tally.Note(fmt.Sprintf("%s the value derived from the raw server metrics by more than %.0f %% (see server metric warnings)",
			runstate.Plural(n, "published AgentX server metric disagrees with", "published AgentX server metrics disagree with"), serverMetricTolerance*100))
	}
	return nil
}

// holds reports whether the replaced keys of a row's numeric metrics are
// exactly out.
func holds(keys []string, metrics, out map[string]float64) bool {
	for _, k := range keys {
		v, ok := metrics[k]
		w, want := out[k]
		if ok != want || (ok && v != w) {
			return false
		}
	}
	return true
}

func relDiff(published, derived float64) float64 {
	if published == 0 {
		if derived == 0 {
			return 0
		}
		return 1
	}
	return math.Abs(derived-published) / math.Abs(published)
}
