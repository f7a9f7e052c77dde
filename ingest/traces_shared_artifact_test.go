package ingest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// A multinode raw artifact holds one conc_<N>/ tree per concurrency, so
// two sidecar jobs read the same artifact, possibly at once: neither may
// close it under the other. (A large profile keeps the first job reading
// while the second finishes; before the fix this failed every time with
// "bad file descriptor".)
func TestTwoSidecarsOfOneRawArtifact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, small := t.TempDir(), t.TempDir()
	big := generate.AgentXOptions{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1", ProfileBytes: 24 << 20}
	require.NoError(t, generate.WriteAgentXRun(dir, agentxRunID, []generate.AgentXOptions{big}))
	require.NoError(t, generate.WriteAgentXRun(small, agentxRunID, []generate.AgentXOptions{{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1"}}))
	raws, err := filepath.Glob(filepath.Join(dir, "agentic_*"))
	require.NoError(t, err)
	require.Len(t, raws, 1)
	require.NoError(t, os.CopyFS(filepath.Join(raws[0], "conc_4"), os.DirFS(filepath.Join(small, filepath.Base(raws[0]), "conc_16"))))
	bmks, err := filepath.Glob(filepath.Join(dir, "bmk_agentic_*", "*_conc16.json"))
	require.NoError(t, err)
	require.Len(t, bmks, 1)
	b, err := os.ReadFile(bmks[0])
	require.NoError(t, err)
	conc4 := strings.Replace(string(b), `"conc": 16`, `"conc": 4`, 1)
	require.NotEqual(t, string(b), conc4)
	require.NoError(t, os.WriteFile(strings.TrimSuffix(bmks[0], "_conc16.json")+"_conc4.json", []byte(conc4), 0o644))

	first := e.mustIngest(dir, ingest.Config{})
	require.Empty(t, first.Failures)
	require.EqualValues(t, 2, first.Rows.Benchmark.New)
	require.Equal(t, schema.Counts{New: 2}, first.Rows.Trace)
	require.Equal(t, 2, e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`))
	second := e.mustIngest(dir, ingest.Config{})
	require.Equal(t, schema.Counts{Duplicate: 2}, second.Rows.Trace)
}

// An AgentX row whose GPU the alias tables do not know is unmapped in the
// benchmark row and in the trace row alike (its trace cannot be linked),
// on the first ingest and on a rerun.
func TestUnmappedAgentXRowIsUnmappedTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{{Layout: generate.AgentXSingleNode, Conc: 4}, {Layout: generate.AgentXSingleNode, Conc: 8}})
	files, err := filepath.Glob(filepath.Join(dir, "bmk_agentic_*conc8*", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	s := strings.Replace(string(b), `"hw": "cluster:b200-dgxc"`, `"hw": "cluster:zz-gpu"`, 1)
	require.NotEqual(t, string(b), s, "the row names its GPU")
	require.NoError(t, os.WriteFile(files[0], []byte(s), 0o644))
	for range 2 {
		sum := e.mustIngest(dir, ingest.Config{})
		require.EqualValues(t, 1, sum.Rows.Benchmark.Unmapped)
		require.EqualValues(t, 1, sum.Rows.Trace.Unmapped)
		require.EqualValues(t, 2, sum.Details.TraceRowsRead)
		checkTraceInvariant(t, sum)
	}
}
