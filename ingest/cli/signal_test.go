package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestSignalContextNamesTheSignal: the first SIGTERM cancels the context
// with a cause naming it, which is also a context.Canceled.
func TestSignalContextNamesTheSignal(t *testing.T) {
	// Not parallel: the signal goes to the whole test process (the handler
	// catches it, so the process lives on).
	ctx, stop := cli.SignalContext(context.Background())
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	cause := context.Cause(ctx)
	require.EqualError(t, cause, "cancelled (SIGTERM)")
	require.ErrorIs(t, cause, context.Canceled)
	var ce *cli.CancelledError
	require.True(t, errors.As(cause, &ce))
	require.Equal(t, "SIGTERM", ce.Signal)
}

// TestSIGTERMStopsTheBinary: the real binary, sent SIGTERM while its
// ingest waits for the run's lock, rolls back, prints and records
// "cancelled (SIGTERM)" and exits 1.
func TestSIGTERMStopsTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "ingest")
	build := exec.Command("go", "build", "-o", bin, "github.com/inferencex/ingest/cmd/ingest")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	const runID = 28400000171
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
	db := pgtest.New(t)
	holdRunLock(t, db, "lock-holder", runID)
	cmd := exec.Command(bin, "load", dir, "--database-url", db, "--log-format", "console")
	cmd.Env = append(os.Environ(), "INGEST_LOCK_TIMEOUT=2m")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var lines []string
	waiting := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if !seen && strings.Contains(sc.Text(), fmt.Sprintf("waiting for the advisory lock of run %d", runID)) {
				seen = true
				close(waiting)
			}
		}
	}()
	select {
	case <-waiting:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-readDone
		t.Fatalf("the ingest never waited for the lock:\n%s", strings.Join(lines, "\n"))
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	<-readDone
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	all := strings.Join(lines, "\n")
	require.Equal(t, cli.ExitAborted, exit.ExitCode(), all)
	require.Contains(t, all, "ingest: aborted: cancelled (SIGTERM)")
	require.NotContains(t, all, "closed network connection")
	require.Equal(t, ledgerRow{attempt: 1, status: "aborted", reason: "cancelled (SIGTERM)"}, newestLedgerRow(t, db, runID))
	require.Zero(t, count(t, db, "workflow_runs"))
}
