package cli_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestExportTelemetry exports the demo run's samples as Parquet; the file
// appears only when complete, --out - is stdout, a FIFO is written into
// (not replaced), and usage errors are caught before the
// database is touched.
func TestExportTelemetry(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	requireCode(t, cli.ExitOK, run(t, nil, "demo", "--database-url", db))
	out := filepath.Join(t.TempDir(), "demo.parquet")
	r := run(t, nil, "export", "telemetry", "--run-id", "28485856738", "--out", out, "--database-url", db)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, "wrote 19272 samples of run 28485856738 attempt 2 to "+out+"\n", r.stdout)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "PAR1", string(b[:4]))
	require.Equal(t, "PAR1", string(b[len(b)-4:]))

	// --out -: the Parquet file on stdout, the note on stderr.
	r = run(t, nil, "export", "telemetry", "--run-id", "28485856738", "--out", "-", "--database-url", db)
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, string(b), r.stdout, "stdout is the Parquet file")
	require.Contains(t, r.stderr, "wrote 19272 samples of run 28485856738 attempt 2 to -\n")

	// A FIFO receives the file and stays a FIFO.
	fifo := filepath.Join(t.TempDir(), "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	requireCode(t, cli.ExitOK, run(t, nil, "export", "telemetry", "--run-id", "28485856738", "--out", fifo, "--database-url", db))
	require.Equal(t, b, <-got)
	info, err := os.Lstat(fifo)
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, info.Mode().Type())

	missing := filepath.Join(t.TempDir(), "none.parquet")
	requireCode(t, cli.ExitAborted, run(t, nil, "export", "telemetry", "--run-id", "1", "--out", missing, "--database-url", db))
	_, err = os.Stat(missing)
	require.True(t, os.IsNotExist(err), "no half-written file")
	entries, err := os.ReadDir(filepath.Dir(missing))
	require.NoError(t, err)
	require.Empty(t, entries, "no temporary file left behind")

	for _, args := range [][]string{
		{"export"},
		{"export", "evals", "--run-id", "1", "--out", out},
		{"export", "telemetry", "--out", out},
		{"export", "telemetry", "--run-id", "1"},
		{"export", "telemetry", "--run-id", "x", "--out", out},
	} {
		requireCode(t, cli.ExitUsage, run(t, nil, append(args, "--database-url", "postgres://nobody@127.0.0.1:1/none")...))
	}
}
