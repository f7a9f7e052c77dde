package perf

import (
	"fmt"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/schema"
)

// check compares one ingest's report with what its run is designed to
// produce (generate.Manifest) and returns what differs. A first pass must
// write everything the manifest lists; a rerun must write nothing new.
func check(s *schema.Summary, m generate.Manifest, rerun bool) []string {
	var out []string
	if err := report.CheckInvariant(s); err != nil {
		out = append(out, err.Error())
	}
	if s.Status != schema.StatusSucceeded {
		out = append(out, fmt.Sprintf("status %s, %d failures (first: %s)", s.Status, len(s.Failures), firstFailure(s)))
	}
	if want := m.Rows(rerun); s.Rows != want {
		out = append(out, fmt.Sprintf("report rows %+v, designed %+v", s.Rows, want))
	}
	if len(s.PowerWarnings) > 0 {
		out = append(out, fmt.Sprintf("%d power warnings (the generated telemetry agrees with its rows): first %+v",
			len(s.PowerWarnings), s.PowerWarnings[0]))
	}
	if !s.Unmapped.Empty() {
		out = append(out, fmt.Sprintf("unmapped values: %+v", s.Unmapped))
	}
	written := func(n int64) int64 {
		if rerun {
			return 0
		}
		return n
	}
	counters := []struct {
		name      string
		got, want int64
	}{
		{"rawBenchmarkRows", s.Stats.RawBenchmarkRows, int64(m.RawBenchmarkRows)},
		{"coveredByPerJobFiles", s.Stats.CoveredByPerJobFiles, int64(m.AggregateRows)},
		{"evalRows", s.Details.EvalRows, int64(m.EvalRows)},
		{"evalSampleLines", s.Details.EvalSampleLines, int64(m.EvalSampleLines)},
		{"evalSamplesNew", s.Stats.EvalSamplesNew, written(int64(m.EvalSampleLines))},
		{"traceRowsRead", s.Details.TraceRowsRead, int64(m.AgenticPoints)},
		{"traceSidecarsNew", s.Details.TraceSidecarsNew, written(int64(m.AgentXTraces))},
		{"serverLogsNew", s.Details.ServerLogsNew, written(int64(m.AgentXServerLogs))},
		{"powerSeriesRead", s.Details.PowerSeriesRead, int64(m.TelemetrySeries)},
		{"gpuMetricSamplesNew", s.Stats.GPUMetricSamplesNew, written(m.TelemetrySamples)},
		{"changelogEntriesWritten", s.Stats.ChangelogEntriesWritten, written(int64(m.ChangelogEntries))},
	}
	if rerun {
		// Nothing else may be new either.
		counters = append(counters, []struct {
			name      string
			got, want int64
		}{
			{"runStatsNew", s.Stats.RunStatsNew, 0},
			{"configsNew", s.Details.ConfigsNew, 0},
			{"availabilityNew", s.Details.AvailabilityNew, 0},
			{"benchmarkRowsUpdated", s.Details.BenchmarkRowsUpdated, 0},
			{"evalRowsUpdated", s.Details.EvalRowsUpdated, 0},
			{"evalSampleTextsNew", s.Details.EvalSampleTextsNew, 0},
			{"traceBlobsNew", s.Details.TraceBlobsNew, 0},
			{"traceBlobBytesNew", s.Details.TraceBlobBytesNew, 0},
			{"serverLogRowsLinked", s.Details.ServerLogRowsLinked, 0},
		}...)
	}
	for _, c := range counters {
		if c.got != c.want {
			out = append(out, fmt.Sprintf("%s %d, designed %d", c.name, c.got, c.want))
		}
	}
	return out
}

func firstFailure(s *schema.Summary) string {
	if len(s.Failures) == 0 {
		return "none"
	}
	f := s.Failures[0]
	return fmt.Sprintf("%s %s %s: %s", f.Category, f.Artifact, f.File, f.Reason)
}
