package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestStageProgressOutput draws two stages with a fake clock: the live
// line is redrawn in place at most every 100 ms, with the total, rate, time
// taken and ETA once they are known; each ended stage keeps its final line;
// Close erases the line of a stage that did not end.
func TestStageProgressOutput(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := newStageProgress(&buf, clock.now)

	p.Done() // no stage yet: nothing
	p.Start("benchmarks")
	p.Expect("files", 0)
	clock.advance(50 * time.Millisecond)
	p.Add(5) // within 100 ms of the last draw: counted, not drawn
	clock.advance(50 * time.Millisecond)
	p.Add(5)
	clock.advance(900 * time.Millisecond)
	p.Done()

	p.Start("telemetry")
	p.Expect("series", 40)
	clock.advance(2 * time.Second)
	p.Add(10)
	clock.advance(2 * time.Second)
	p.Add(30)
	p.Done()

	p.Start("curves") // a stage that counts nothing
	clock.advance(250 * time.Millisecond)
	p.Done()

	p.Start("commit")
	clock.advance(1500 * time.Millisecond)
	p.Close()
	p.Close() // nothing left to erase

	const cl = "\r\033[K"
	want := strings.Join([]string{
		cl + "benchmarks: 0s",
		cl + "benchmarks: 0 files, 0s",
		cl + "benchmarks: 10 files, 100.0/s, 100ms",
		cl + "benchmarks: 10 files in 1s, 10.0/s\n",
		cl + "telemetry: 0s",
		cl + "telemetry: 0/40 series, 0s",
		cl + "telemetry: 10/40 series, 5.0/s, 2s, ETA 6s",
		cl + "telemetry: 40/40 series, 10.0/s, 4s",
		cl + "telemetry: 40 series in 4s, 10.0/s\n",
		cl + "curves: 0s",
		cl + "curves: 250ms\n",
		cl + "commit: 0s",
		cl,
	}, "")
	require.Equal(t, want, buf.String())
}

// TestStageProgressTick: while a stage counts nothing, a tick redraws its
// line once it is 100 ms old (the time taken moves on); between stages a
// tick draws nothing.
func TestStageProgressTick(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := newStageProgress(&buf, clock.now)
	p.tick() // no stage: nothing
	p.Start("telemetry")
	clock.advance(60 * time.Millisecond)
	p.tick() // 60 ms old: not redrawn
	clock.advance(60 * time.Millisecond)
	p.tick()
	clock.advance(2 * time.Second)
	p.tick()
	p.Done()
	clock.advance(time.Second)
	p.tick()
	const cl = "\r\033[K"
	require.Equal(t, cl+"telemetry: 0s"+cl+"telemetry: 120ms"+cl+"telemetry: 2.1s"+cl+"telemetry: 2.1s\n", buf.String())
}

func TestRoundDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		312456 * time.Microsecond: "312ms",
		4234 * time.Millisecond:   "4.2s",
		73400 * time.Millisecond:  "1m13s",
		0:                         "0s",
	} {
		require.Equal(t, want, roundDuration(d), d)
	}
}

// TestStageProgressPhases: an Expect of another unit starts the stage's
// count again (the traces stage hashes, then stores); the rate and ETA are
// the phase's, the final line's time the whole stage's.
func TestStageProgressPhases(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := newStageProgress(&buf, clock.now)
	p.Start("traces")
	p.Expect("traces hashed", 4)
	clock.advance(time.Second)
	p.Add(4)
	p.Expect("traces stored", 2)
	clock.advance(time.Second)
	p.Add(1)
	clock.advance(time.Second)
	p.Add(1)
	p.Done()

	const cl = "\r\033[K"
	want := strings.Join([]string{
		cl + "traces: 0s",
		cl + "traces: 0/4 traces hashed, 0s",
		cl + "traces: 4/4 traces hashed, 4.0/s, 1s",
		cl + "traces: 0/2 traces stored, 1s",
		cl + "traces: 1/2 traces stored, 1.0/s, 2s, ETA 1s",
		cl + "traces: 2/2 traces stored, 1.0/s, 3s",
		cl + "traces: 2 traces stored in 3s, 1.0/s\n",
	}, "")
	require.Equal(t, want, buf.String())
}

// TestLogLineClearsProgress: on a terminal a log line never lands glued to
// the live progress line: the line is erased first and drawn again below
// the log line; once the stage ends, log lines are written as they are.
func TestLogLineClearsProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	stderr := &liveStderr{w: &buf}
	p := newStageProgress(stderr, clock.now)
	p.Start("benchmarks")
	live := "benchmarks: 0s"
	require.Equal(t, "\r\033[K"+live, buf.String())

	buf.Reset()
	_, err := stderr.Write([]byte("WARN\tartifact skipped\n"))
	require.NoError(t, err)
	require.Equal(t, "\r\033[KWARN\tartifact skipped\n"+live, buf.String())

	p.Done()
	buf.Reset()
	_, err = stderr.Write([]byte("INFO\tdone\n"))
	require.NoError(t, err)
	require.Equal(t, "INFO\tdone\n", buf.String(), "no progress line to erase")
	require.True(t, isTerminal(stderr), "the shared stderr is still a terminal")
}
