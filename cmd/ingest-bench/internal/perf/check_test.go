package perf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/schema"
)

// asDesigned is the summary of an ingest that did exactly what m says.
func asDesigned(m generate.Manifest, rerun bool) *schema.Summary {
	s := &schema.Summary{Status: schema.StatusSucceeded, Rows: m.Rows(rerun)}
	s.Stats.RawBenchmarkRows = int64(m.RawBenchmarkRows)
	s.Stats.CoveredByPerJobFiles = int64(m.AggregateRows)
	s.Details.EvalRows = int64(m.EvalRows)
	s.Details.EvalSampleLines = int64(m.EvalSampleLines)
	s.Details.TraceRowsRead = int64(m.AgenticPoints)
	s.Details.PowerSeriesRead = int64(m.TelemetrySeries)
	if !rerun {
		s.Stats.EvalSamplesNew = int64(m.EvalSampleLines)
		s.Details.TraceSidecarsNew = int64(m.AgentXTraces)
		s.Details.ServerLogsNew = int64(m.AgentXServerLogs)
		s.Stats.GPUMetricSamplesNew = m.TelemetrySamples
		s.Stats.ChangelogEntriesWritten = int64(m.ChangelogEntries)
		s.Stats.RunStatsNew = 16
		s.Details.TraceBlobsNew = 20
	}
	return s
}

// check finds every way a report can differ from the design: a wrong
// count, a row that does not add up, a failure, something new on a rerun.
func TestCheck(t *testing.T) {
	m := generate.Manifest{Points: 10, PerJobFiles: 11, AggregateRows: 11, RawBenchmarkRows: 22, StaleRows: 1,
		AgenticPoints: 3, AgentXTraces: 2, AgentXServerLogs: 2, EvalRows: 4, EvalKeys: 2, EvalSampleLines: 8,
		TelemetrySeries: 6, TelemetryWinnerSeries: 5, TelemetrySamples: 900, ChangelogEntries: 1}
	tests := []struct {
		name   string
		rerun  bool
		break_ func(s *schema.Summary)
		want   []string // substrings, one per problem
	}{
		{"first as designed", false, func(*schema.Summary) {}, nil},
		{"rerun as designed", true, func(*schema.Summary) {}, nil},
		{"a point missing", false, func(s *schema.Summary) { s.Rows.Benchmark.New--; s.Rows.Benchmark.Failed++ },
			[]string{"report rows"}},
		{"row does not add up", false, func(s *schema.Summary) { s.Rows.Power.New++ },
			[]string{"row power", "report rows"}},
		{"completed with failures", false, func(s *schema.Summary) {
			s.Status = schema.StatusCompletedWithFailures
			s.Failures = []schema.Failure{{Category: schema.CategoryRun, Artifact: "a", Reason: "bad"}}
		}, []string{"status completed_with_failures, 1 failures (first: run a : bad)"}},
		{"samples not all stored", false, func(s *schema.Summary) { s.Stats.EvalSamplesNew-- }, []string{"evalSamplesNew 7, designed 8"}},
		{"telemetry samples on a rerun", true, func(s *schema.Summary) { s.Stats.GPUMetricSamplesNew = 3 },
			[]string{"gpuMetricSamplesNew 3, designed 0"}},
		{"trace bytes on a rerun", true, func(s *schema.Summary) { s.Details.TraceBlobBytesNew = 4096 },
			[]string{"traceBlobBytesNew 4096, designed 0"}},
		{"configs on a rerun", true, func(s *schema.Summary) { s.Details.ConfigsNew = 1 }, []string{"configsNew 1, designed 0"}},
		{"power warning", false, func(s *schema.Summary) {
			s.PowerWarnings = []schema.PowerWarning{{}}
		}, []string{"1 power warnings"}},
		{"unmapped", false, func(s *schema.Summary) { s.Unmapped.Hardware = []string{"a100"} }, []string{"unmapped values"}},
		{"changelog twice", true, func(s *schema.Summary) { s.Stats.ChangelogEntriesWritten = 1 },
			[]string{"changelogEntriesWritten 1, designed 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := asDesigned(m, tt.rerun)
			tt.break_(s)
			got := check(s, m, tt.rerun)
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				require.Contains(t, got[i], w)
			}
		})
	}
}
