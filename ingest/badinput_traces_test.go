package ingest_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// onlyArtifact is the one artifact folder of the tree whose name starts
// with prefix.
func onlyArtifact(t *testing.T, dir, prefix string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	require.NoError(t, err)
	require.Len(t, m, 1, "%s*", prefix)
	return m[0]
}

func writeTarGz(t *testing.T, path string, entries ...string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, name := range entries {
		body := "GPU KV cache size: 1,000 tokens\n"
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// Server log files whose names PostgreSQL text cannot hold — a tarball
// entry or a folder file named in Latin-1 — fail their bundle with a reason
// naming artifact and file; the AgentX rows, their traces and the other
// server logs land, and the run is not aborted.
func TestServerLogNamesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 4},
		{Layout: generate.AgentXNested, Conc: 8, Framework: "vllm"},
		{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1"},
	})
	multi := onlyArtifact(t, dir, "multinode_server_logs_")
	writeTarGz(t, filepath.Join(multi, "multinode_server_logs.tar.gz"), "logs/prefill_0.log", "logs/caf\xe9.log")
	single := onlyArtifact(t, dir, "server_logs_*conc4")
	writeFile(t, filepath.Join(single, "results", "caf\xe9.log"), "x\n")

	sum := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, sum)
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	require.Equal(t, schema.Counts{New: 3}, sum.Rows.Trace, "the traces are fine: %+v", sum.Failures)
	require.EqualValues(t, 1, sum.Details.ServerLogsNew, "only the conc 8 server logs are stored")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM server_logs`))
	want := map[string]string{
		filepath.Base(multi):  `server log: entry "logs/caf\xe9.log": name is not valid UTF-8`,
		filepath.Base(single): `server log: name is not valid UTF-8`,
	}
	for _, f := range sum.Failures {
		require.True(t, utf8.ValidString(f.File) && utf8.ValidString(f.Reason), "%+v", f)
		if w, ok := want[f.Artifact]; ok && strings.Contains(f.Reason, w) {
			delete(want, f.Artifact)
		}
	}
	require.Empty(t, want, "missing failures; got %+v", sum.Failures)

	// A second ingest reports the same and changes nothing.
	before := e.checksums(dataTables...)
	again := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, again)
	require.Equal(t, schema.Counts{Duplicate: 3}, again.Rows.Trace)
	require.Len(t, again.Failures, len(sum.Failures))
	require.Equal(t, before, e.checksums(dataTables...))
}

// A truncated or wrong-shape server_metrics_export.json is a failure
// naming artifact and file; its trace is fine, so the row is still linked
// (counted new) and stored without server-side series. Empty profile
// records fail their trace, naming the line.
func TestBadServerMetricsAndProfileRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 4},
		{Layout: generate.AgentXNested, Conc: 8, Framework: "vllm"},
		{Layout: generate.AgentXMultinode, Conc: 16, Runner: "gb200-nv_1"},
		{Layout: generate.AgentXSingleNode, Conc: 32},
	})
	find := func(prefix, base string) string {
		t.Helper()
		var found string
		require.NoError(t, filepath.Walk(onlyArtifact(t, dir, prefix), func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Name() == base {
				found = p
			}
			return err
		}))
		require.NotEmpty(t, found, "%s in %s*", base, prefix)
		return found
	}
	truncated := find("agentic_*conc4", "server_metrics_export.json")
	data, err := os.ReadFile(truncated)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))
	wrong := find("agentic_*conc8", "server_metrics_export.json")
	require.NoError(t, os.WriteFile(wrong, []byte(`{"schema_version": "1.0", "metrics": [1, 2]}`), 0o644))
	// A metric name with a NUL, cut short: the reason quotes the name and
	// must still fit the ledger's jsonb.
	nul := find("agentic_*conc32", "server_metrics_export.json")
	require.NoError(t, os.WriteFile(nul, []byte(`{"metrics": {"vllm:bad\u0000name`+"\xff"+`": [1, `), 0o644))
	profile := find("agentic_*conc16", "profile_export.jsonl")
	f, err := os.OpenFile(profile, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	sum := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, sum)
	require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
	require.Equal(t, schema.Counts{New: 3, Failed: 1}, sum.Rows.Trace, "%+v", sum.Failures)
	require.EqualValues(t, 4, sum.Rows.Benchmark.New, "the rest of the run lands")
	var metrics, records int
	for _, fl := range sum.Failures {
		switch {
		case fl.Category == schema.CategoryRun && strings.HasSuffix(fl.File, "server_metrics_export.json") &&
			strings.Contains(fl.Reason, "server metrics export unreadable"):
			require.True(t, strings.HasPrefix(fl.Artifact, "agentic_"), "%+v", fl)
			if strings.Contains(fl.Artifact, "conc32") {
				require.Contains(t, fl.Reason, `vllm:bad\x00name`+"\uFFFD")
			}
			metrics++
		case fl.Category == schema.CategoryTrace && strings.HasSuffix(fl.File, "profile_export.jsonl") &&
			strings.Contains(fl.Reason, "empty record"):
			require.Contains(t, fl.Artifact, "conc16")
			records++
		}
	}
	require.Equal(t, 3, metrics, "%+v", sum.Failures)
	require.Equal(t, 1, records, "%+v", sum.Failures)
	require.Equal(t, 3, e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`))
	// The ledger holds the summary, failures and all.
	require.Equal(t, 1, e.count(`SELECT count(*) FROM ingests WHERE status = 'completed_with_failures'`))
}
