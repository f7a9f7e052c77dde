package traces_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/internal/stagetest"
	"github.com/inferencex/ingest/ingest/stages/traces"
)

// Every AgentX point's raw trace and server logs are paired with its
// stored row and written.
func TestStageWritesTracesAndServerLogs(t *testing.T) {
	r := stagetest.Open(t, generate.Options{Points: 4, Seed: 7, RunID: 920301, AgentX: 3})
	m, sum := r.Manifest, r.Env.Sum
	c, err := traces.Run(t.Context(), r.W, r.Env)
	require.NoError(t, err)
	sum.AddCounters(c)
	require.Empty(t, sum.Failures)
	require.Equal(t, m.Rows(false).Trace, sum.Rows.Trace)
	require.Equal(t, int64(m.AgenticPoints), sum.Details.TraceRowsRead)
	require.Equal(t, int64(m.AgentXTraces), sum.Details.TraceSidecarsNew)
	require.Equal(t, int64(m.AgentXServerLogs), sum.Details.ServerLogsNew)
	require.Positive(t, sum.Details.TraceBlobsNew)
}
