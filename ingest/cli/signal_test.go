package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// TestSIGTERMStopsTheProcess: an ingest process (this test binary run as
// `ingest`, wired as cmd/ingest's main: childEnv), sent SIGTERM while its
// ingest waits for the run's lock, rolls back, prints and records
// "cancelled (SIGTERM)" and exits 1. The built binary gets the same signal
// in the ingest package's hostile suite (sigterm-while-waiting).
func TestSIGTERMStopsTheProcess(t *testing.T) {
	t.Parallel()
	const runID = 28400000171
	dir, _ := genTree(t, generate.Options{Points: 3, Seed: 1, RunID: runID})
	db := pgtest.New(t)
	holdRunLock(t, db, "lock-holder", runID)
	cmd := exec.Command(os.Args[0], "load", dir, "--database-url", db, "--log-format", "console")
	cmd.Env = append(os.Environ(), childEnv+"=1", "INGEST_LOCK_TIMEOUT=2m")
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
