package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
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

// TestDownloadProgress: `ingest run`'s download line counts artifacts and
// bytes of the listed total, with the download rate, the time taken and
// the time left; a tick moves the time on; the final line is kept, and a
// batch that stopped says so.
func TestDownloadProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := newDownloadProgress(&buf, clock.now)
	p.Start(4, 8<<20)
	clock.advance(time.Second)
	p.Done("a", 2<<20, false)
	clock.advance(50 * time.Millisecond)
	p.Done("b", 2<<20, true) // within 100 ms: counted, not drawn
	clock.advance(950 * time.Millisecond)
	p.tick()
	clock.advance(time.Second)
	p.Done("c", 2<<20, false)
	clock.advance(time.Second)
	p.Done("d", 2<<20, false)
	p.Finish(nil)
	p.tick() // finished: nothing

	const cl = "\r\033[K"
	want := strings.Join([]string{
		cl + "artifacts: 0/4, 0.0 MiB of 8.0 MiB, 0s",
		cl + "artifacts: 1/4, 2.0 MiB of 8.0 MiB, 2.0 MiB/s, 1s, ETA 3s",
		cl + "artifacts: 2/4 (1 cached), 4.0 MiB of 8.0 MiB, 1.0 MiB/s, 2s, ETA 4s",
		cl + "artifacts: 3/4 (1 cached), 6.0 MiB of 8.0 MiB, 1.3 MiB/s, 3s, ETA 1.5s",
		cl + "artifacts: 4/4 (1 cached), 8.0 MiB of 8.0 MiB, 1.5 MiB/s, 4s",
		cl + "artifacts: 4 (1 cached), 6.0 MiB downloaded in 4s, 1.5 MiB/s\n",
	}, "")
	require.Equal(t, want, buf.String())

	buf.Reset()
	p = newDownloadProgress(&buf, clock.now)
	p.Start(2, 4<<20)
	clock.advance(time.Second)
	p.Done("a", 1<<20, false)
	p.Finish(errors.New("boom"))
	require.True(t, strings.HasSuffix(buf.String(), cl+"artifacts: stopped at 1/2, 1.0 MiB downloaded in 1s, 1.0 MiB/s\n"), buf.String())
}

// TestBackfillProgressKeepsLogsAbove: on the shared stderr a backfill's
// failure and a log line both land above the live bar, which is drawn
// again below them; the final bar ends its line.
func TestBackfillProgressKeepsLogsAbove(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	stderr := &liveStderr{w: &buf}
	p := newBackfillProgress(stderr)
	p.width = 4
	c := schema.BackfillCounts{Total: 2, Pending: 2}
	p.Start(schema.BackfillPass{}, c)
	p.Working(schema.BackfillRun{RunID: 7})
	_, err := stderr.Write([]byte(`{"level":"info","msg":"claimed"}` + "\n"))
	require.NoError(t, err)
	c.Pending, c.Failed = 1, 1
	p.Settled(schema.BackfillRun{RunID: 7}, schema.BackfillOutcome{State: schema.BackfillFailed, Attempt: 1, Detail: "boom"}, nil, c, 0)
	c.Pending, c.Ingested = 0, 1
	p.Finish(c)

	const cl = "\r\033[K"
	want := strings.Join([]string{
		cl + "[>   ] 0/2 runs",
		cl + "[>   ] 0/2 runs  run 7",
		cl + `{"level":"info","msg":"claimed"}` + "\n" + "[>   ] 0/2 runs  run 7",
		cl + "run 7 attempt 1 failed: boom\n",
		cl + "[==> ] 1/2 runs  1 failed",
		cl + "[====] 2/2 runs  1 failed\n",
	}, "")
	require.Equal(t, want, buf.String())
	buf.Reset()
	_, err = stderr.Write([]byte("after\n"))
	require.NoError(t, err)
	require.Equal(t, "after\n", buf.String(), "no live line left to erase")
}
