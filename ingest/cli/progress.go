package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/inferencex/ingest/ingest/backfill"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/schema"
)

// The one progress display of the tool on a terminal: the ingest's stages
// (stageProgress), `ingest run`'s download (downloadProgress) and a
// backfill's pass (backfillProgress) each draw one live line through
// showLine, and liveStderr keeps every log line above that line.
//
// Our own rather than a library: github.com/vbauerster/mpb/v8, which also
// keeps log lines above its bars, renders from its own goroutine on its
// own clock, so the exact lines
// could not be tested with an injected clock, and it takes log lines only
// while a bar container is running, where ours must take them for the
// whole command (the logger writes to stderr before and after progress).

// progressInterval is the shortest time between two redraws of a stage's
// line: counting is cheap, writing to the terminal is not.
const progressInterval = 100 * time.Millisecond

// stageProgress draws one live line per stage of an ingest on a terminal
// (ingest.Progress): the stage, the items it has done (of how many, when
// known), the rate, the time taken and, with a total, the time left. The
// line is redrawn in place (carriage return, erase line), at most every
// progressInterval, and that often while the stage counts nothing; when the stage ends its final line is kept (items,
// rate and wall time), so the run's stages stay listed above the report.
// A line left by a stage that never ended (an aborted ingest) is erased
// by Close.
type stageProgress struct {
	w   io.Writer
	now func() time.Time

	mu      sync.Mutex
	stage   string // "" between stages
	unit    string
	total   int64
	done    int64
	started time.Time
	// phase is when the current count began: the stage's start, or the
	// Expect of a later phase (its rate and ETA are the phase's).
	phase time.Time
	drawn time.Time
}

func newStageProgress(w io.Writer, now func() time.Time) *stageProgress {
	return &stageProgress{w: w, now: now}
}

func (p *stageProgress) Start(stage string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
	p.stage, p.unit, p.total, p.done = stage, "", 0, 0
	p.started = p.now()
	p.phase = p.started
	p.draw(p.started)
}

func (p *stageProgress) Expect(unit string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stage == "" {
		return
	}
	t := p.now()
	if p.unit != "" && unit != p.unit {
		// A later phase of the stage: its own count.
		p.done, p.phase = 0, t
	}
	p.unit, p.total = unit, total
	p.draw(t)
}

func (p *stageProgress) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stage == "" {
		return
	}
	p.done += n
	if t := p.now(); t.Sub(p.drawn) >= progressInterval {
		p.draw(t)
	}
}

func (p *stageProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
}

// tick redraws the live line when it is progressInterval old, so that the
// time taken moves on while a stage counts nothing (a telemetry stage
// hashing its files, a commit).
func (p *stageProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.now(); p.stage != "" && t.Sub(p.drawn) >= progressInterval {
		p.draw(t)
	}
}

// ticker is a live line that moves on with time alone (its elapsed time
// and ETA), redrawn by redraw.
type ticker interface{ tick() }

// redraw ticks p every progressInterval until the returned stop is
// called; stop returns once nothing more is drawn.
func redraw(p ticker) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.tick()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// Close erases the line of a stage that did not end.
func (p *stageProgress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stage != "" {
		p.show("", false)
		p.stage = ""
	}
}

// end keeps the final line of the current stage, if any.
func (p *stageProgress) end() {
	if p.stage == "" {
		return
	}
	p.show(p.line(p.now(), true)+"\n", false)
	p.stage = ""
}

func (p *stageProgress) draw(t time.Time) {
	p.drawn = t
	p.show(p.line(t, false), true)
}

func (p *stageProgress) show(s string, live bool) { showLine(p.w, s, live) }

// showLine replaces the live line on w by s; live: s is the new live line
// (else it is kept, ending in a newline, or is nothing). On the shared
// stderr (liveStderr) log lines written later go above it.
func showLine(w io.Writer, s string, live bool) {
	if ls, ok := w.(*liveStderr); ok {
		ls.replace(s, live)
		return
	}
	fmt.Fprint(w, eraseLine+s)
}

// eraseLine moves to the start of the line and erases it.
const eraseLine = "\r\033[K"

// liveStderr is stderr on a terminal, shared by the log and the progress
// line: a log line first erases the live progress line, which is drawn
// again below it, so that no log line is glued to a progress line.
type liveStderr struct {
	mu   sync.Mutex
	w    io.Writer
	live string // the live line on screen, "" when none
}

// Write writes a log line above the live line.
func (l *liveStderr) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live != "" {
		fmt.Fprint(l.w, eraseLine)
	}
	n, err := l.w.Write(b)
	if l.live != "" {
		fmt.Fprint(l.w, l.live)
	}
	return n, err
}

// replace erases the live line and writes s; live: s is the new live line.
func (l *liveStderr) replace(s string, live bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprint(l.w, eraseLine+s)
	l.live = ""
	if live {
		l.live = s
	}
}

// line is the stage's line at t: live ("telemetry: 12/48 series, 15.0/s,
// 800ms, ETA 2.4s") or final ("telemetry: 48 series in 3.2s, 15.0/s").
func (p *stageProgress) line(t time.Time, final bool) string {
	took, phase := t.Sub(p.started), t.Sub(p.phase)
	var fields []string
	count := ""
	switch {
	case p.unit == "":
	case p.total > 0 && !final:
		count = fmt.Sprintf("%d/%d %s", p.done, p.total, p.unit)
	default:
		count = fmt.Sprintf("%d %s", p.done, p.unit)
	}
	switch {
	case final && count != "":
		count += " in " + roundDuration(took)
	case final:
		count = roundDuration(took)
	}
	if count != "" {
		fields = append(fields, count)
	}
	r := rate(float64(p.done), phase)
	if p.unit != "" && r > 0 {
		fields = append(fields, fmt.Sprintf("%.1f/s", r))
	}
	if !final {
		fields = append(fields, roundDuration(took))
		if left := eta(float64(p.total-p.done), r); p.total > 0 && left > 0 {
			fields = append(fields, "ETA "+roundDuration(left))
		}
	}
	return p.stage + ": " + strings.Join(fields, ", ")
}

// roundDuration prints d with its unit, to a precision that fits its size:
// 312ms, 4.2s, 1m13s.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// rate is n per second over d (0 when either is zero).
func rate(n float64, d time.Duration) float64 {
	if n <= 0 || d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

// eta is the time left for left more at r per second (0: unknown).
func eta(left, r float64) time.Duration {
	if left <= 0 || r <= 0 {
		return 0
	}
	return time.Duration(left / r * float64(time.Second))
}

// downloadProgress is `ingest run`'s download on a terminal
// (github.Progress): artifacts and bytes settled of the listed total, the
// download rate, the time taken and the time left; its final line is kept.
type downloadProgress struct {
	w   io.Writer
	now func() time.Time

	mu                        sync.Mutex
	live                      bool
	total, done, cached       int
	totalBytes, settled, down int64 // settled: downloaded or found in the cache
	started, drawn            time.Time
}

var _ github.Progress = (*downloadProgress)(nil)

func newDownloadProgress(w io.Writer, now func() time.Time) *downloadProgress {
	return &downloadProgress{w: w, now: now}
}

func (p *downloadProgress) Start(n int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.totalBytes, p.started, p.live = n, bytes, p.now(), true
	p.draw(p.started)
}

func (p *downloadProgress) Done(_ string, bytes int64, cached bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.settled += bytes
	if cached {
		p.cached++
	} else {
		p.down += bytes
	}
	if t := p.now(); p.live && (p.done == p.total || t.Sub(p.drawn) >= progressInterval) {
		p.draw(t)
	}
}

func (p *downloadProgress) Finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live {
		return
	}
	p.live = false
	t := p.now()
	took := t.Sub(p.started)
	line := fmt.Sprintf("artifacts: %d%s, %s downloaded in %s", p.done, p.cachedNote(), mib(p.down), roundDuration(took))
	if err != nil {
		line = fmt.Sprintf("artifacts: stopped at %d/%d%s, %s downloaded in %s", p.done, p.total, p.cachedNote(), mib(p.down), roundDuration(took))
	}
	if r := rate(float64(p.down), took); r > 0 {
		line += ", " + mib(int64(r)) + "/s"
	}
	showLine(p.w, line+"\n", false)
}

func (p *downloadProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.now(); p.live && t.Sub(p.drawn) >= progressInterval {
		p.draw(t)
	}
}

// draw shows the live line at t: "artifacts: 12/48 (3 cached), 120.5 MiB
// of 512.0 MiB, 12.3 MiB/s, 4.2s, ETA 30s". The rate is of the bytes
// downloaded; the ETA is the listed bytes not yet settled at that rate.
func (p *downloadProgress) draw(t time.Time) {
	p.drawn = t
	took := t.Sub(p.started)
	fields := []string{fmt.Sprintf("%d/%d%s", p.done, p.total, p.cachedNote()), mib(p.settled) + " of " + mib(p.totalBytes)}
	r := rate(float64(p.down), took)
	if r > 0 {
		fields = append(fields, mib(int64(r))+"/s")
	}
	fields = append(fields, roundDuration(took))
	if left := eta(float64(p.totalBytes-p.settled), r); left > 0 && p.done < p.total {
		fields = append(fields, "ETA "+roundDuration(left))
	}
	showLine(p.w, "artifacts: "+strings.Join(fields, ", "), true)
}

func (p *downloadProgress) cachedNote() string {
	if p.cached == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d cached)", p.cached)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// backfillProgress is a backfill pass on a terminal (backfill.Progress): a
// bar of the pass's settled runs, the failures, the ETA and the run being
// worked on. A failure is printed above it as it happens.
type backfillProgress struct {
	w     io.Writer
	mu    sync.Mutex
	c     schema.BackfillCounts
	eta   time.Duration
	what  string
	width int
}

var _ backfill.Progress = (*backfillProgress)(nil)

func newBackfillProgress(w io.Writer) *backfillProgress { return &backfillProgress{w: w, width: 30} }

func (p *backfillProgress) Start(_ schema.BackfillPass, c schema.BackfillCounts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c = c
	p.draw()
}

func (p *backfillProgress) Working(run schema.BackfillRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.what = fmt.Sprintf("run %d", run.RunID)
	p.draw()
}

func (p *backfillProgress) Settled(run schema.BackfillRun, out schema.BackfillOutcome, _ *schema.Summary, c schema.BackfillCounts, eta time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c, p.eta, p.what = c, eta, ""
	if out.State == schema.BackfillFailed {
		showLine(p.w, fmt.Sprintf("run %d attempt %d failed: %s\n", run.RunID, out.Attempt, out.Detail), false)
	}
	p.draw()
}

func (p *backfillProgress) Finish(c schema.BackfillCounts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c, p.what, p.eta = c, "", 0
	showLine(p.w, backfillLine(p.c, p.eta, p.what, p.width)+"\n", false)
}

func (p *backfillProgress) draw() {
	showLine(p.w, backfillLine(p.c, p.eta, p.what, p.width), true)
}

// backfillLine renders the bar: "[=====>    ] 23/50 runs  1 failed  ETA 2m10s  run 123".
func backfillLine(c schema.BackfillCounts, eta time.Duration, what string, width int) string {
	done := c.Done()
	filled := 0
	if c.Total > 0 {
		filled = int(int64(width) * done / c.Total)
	}
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %d/%d runs", bar, done, c.Total)
	if c.Failed > 0 {
		fmt.Fprintf(&b, "  %d failed", c.Failed)
	}
	if eta >= time.Second {
		fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
	}
	if what != "" {
		fmt.Fprintf(&b, "  %s", what)
	}
	return b.String()
}
