//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// openPTY opens a pseudo-terminal: the terminal side a command writes to,
// and the controlling side the test reads what it wrote from.
func openPTY(t *testing.T) (term, ctl *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	fd := int(ctl.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	return term, ctl
}

// TestLogLinesAboveProgressOnATerminal: `ingest run` on a terminal with
// JSON logs on (CI=true under a PTY, as Buildkite or docker run -t give)
// draws its download and stage progress, and every log line starts on a
// line of its own: never glued to an unfinished progress line.
func TestLogLinesAboveProgressOnATerminal(t *testing.T) {
	t.Parallel()
	term, ctl := openPTY(t)
	fake, _ := demoFake(t)
	// A log line while the download line is live: the rate-limit wait.
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Times: 1, Kind: fakegithub.SecondaryRateLimit})
	vars := runVars(fake, pgtest.New(t), t.TempDir())
	vars["CI"] = "true"

	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&out, ctl) // ends with EIO once the terminal side is closed
	}()
	var stdout bytes.Buffer
	code := cli.Main(t.Context(), []string{"run", "--run-id", "28485856738", "--dry-run", "--log-level", "info"},
		cli.Env{Stdout: &stdout, Stderr: term, Getenv: fakeEnv(vars)})
	require.NoError(t, term.Close())
	<-read
	ctl.Close()
	require.Equal(t, cli.ExitCompletedWithFailures, code, out.String())

	got := out.String()
	require.Contains(t, got, "\r\033[Kartifacts", "the download progress was drawn")
	require.Contains(t, got, "rate limited: waiting")
	require.Contains(t, got, "benchmarks: ", "the stage progress was drawn")
	logs := regexp.MustCompile(`\{"level":`).FindAllStringIndex(got, -1)
	require.NotEmpty(t, logs, "JSON log lines were written")
	for _, l := range logs {
		before := got[:l[0]]
		ok := before == "" || bytes.HasSuffix([]byte(before), []byte("\n")) || bytes.HasSuffix([]byte(before), []byte("\r\033[K"))
		require.True(t, ok, "a log line glued to the text before it: %q", got[max(0, l[0]-120):min(len(got), l[0]+60)])
	}
}
