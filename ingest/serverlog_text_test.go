package ingest_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
)

// Server logs are text the dashboard's SQL reads through the dashboard
// views: the primary file in server_logs.server_log, the others in
// server_log_files.log_text, byte for byte what the file holds (NUL bytes
// dropped, bytes that are not UTF-8 replaced), a slice by substring().
// Each file's text is stored once whichever bundle holds it; files that
// are not logs are not stored; a rerun stores nothing.
func TestServerLogsAreTextTheDashboardReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, []generate.AgentXOptions{
		{Layout: generate.AgentXSingleNode, Conc: 4},
		{Layout: generate.AgentXSingleNode, Conc: 8},
	})
	c4, c8 := onlyArtifact(t, dir, "server_logs_*conc4"), onlyArtifact(t, dir, "server_logs_*conc8")
	primary := "INFO max_total_num_tokens=4096\x00 caf\xe9 ok \u2603\n"
	shared := "[bench] the same client log in both bundles\n"
	for _, d := range []string{c4, c8} {
		writeFile(t, filepath.Join(d, "results", "benchmark.log"), shared)
		writeFile(t, filepath.Join(d, "results", "notes.json"), `{"not":"a log"}`)
	}
	writeFile(t, filepath.Join(c4, "results", "server.log"), primary)

	first := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 2, first.Details.ServerLogsNew)

	var id int64
	require.NoError(t, e.pool().QueryRow(t.Context(),
		`SELECT id FROM benchmark_results WHERE conc = 4 AND server_log_id IS NOT NULL`).Scan(&id))
	q := func(sql string, args ...any) []string {
		t.Helper()
		tx, err := e.pool().Begin(t.Context())
		require.NoError(t, err)
		defer tx.Rollback(t.Context()) //nolint:errcheck // read only
		_, err = tx.Exec(t.Context(), `SET LOCAL search_path = dashboard, public`)
		require.NoError(t, err)
		rows, err := tx.Query(t.Context(), sql, args...)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	// getServerLog (primary), getServerLogFileNames, getServerLogChunk.
	require.Equal(t, []string{"INFO max_total_num_tokens=4096 caf\uFFFD ok \u2603\n"}, q(`
		SELECT sl.server_log FROM benchmark_results br JOIN server_logs sl ON sl.id = br.server_log_id WHERE br.id = $1`, id))
	require.Equal(t, []string{"results/server.log", "results/benchmark.log"}, q(`
		SELECT file_name FROM (
			SELECT sl.file_name, 0 AS priority FROM benchmark_results br JOIN server_logs sl ON sl.id = br.server_log_id WHERE br.id = $1
			UNION ALL
			SELECT slf.file_name, 1 FROM benchmark_results br JOIN server_logs sl ON sl.id = br.server_log_id
			JOIN server_log_files slf ON slf.server_log_id = sl.id WHERE br.id = $1 AND slf.file_name <> sl.file_name
		) f ORDER BY priority, file_name`, id))
	require.Equal(t, []string{shared}, q(`
		SELECT slf.log_text FROM benchmark_results br JOIN server_log_files slf ON slf.server_log_id = br.server_log_id
		WHERE br.id = $1 AND slf.file_name = 'results/benchmark.log'`, id))
	require.Equal(t, []string{"max_total"}, q(`
		SELECT substring(sl.server_log FROM 6 FOR 9) FROM benchmark_results br JOIN server_logs sl ON sl.id = br.server_log_id WHERE br.id = $1`, id))

	require.Equal(t, 1, e.count(`SELECT count(*) FROM server_log_texts WHERE content = $1`, shared), "the shared file is stored once")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM server_log_files WHERE file_name = 'results/benchmark.log'`))
	require.Zero(t, e.count(`SELECT count(*) FROM server_log_files WHERE file_name NOT LIKE '%.log'`), "notes.json is not a log")
	require.Zero(t, e.count(`SELECT count(*) FROM server_log_files f WHERE NOT EXISTS (SELECT 1 FROM server_log_texts t WHERE t.digest = f.text_digest)`))

	before := e.checksums("server_logs", "server_log_files", "server_log_texts")
	second := e.mustIngest(dir, ingest.Config{Reread: true})
	require.Zero(t, second.Details.ServerLogsNew)
	require.Equal(t, before, e.checksums("server_logs", "server_log_files", "server_log_texts"))
}
