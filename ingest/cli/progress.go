package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

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

// redraw ticks p every progressInterval until the returned stop is
// called; stop returns once nothing more is drawn.
func redraw(p *stageProgress) (stop func()) {
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

// show replaces the live line by s; live: s is the new live line (else it
// is kept, ending in a newline, or is nothing).
func (p *stageProgress) show(s string, live bool) {
	if ls, ok := p.w.(*liveStderr); ok {
		ls.replace(s, live)
		return
	}
	fmt.Fprint(p.w, eraseLine+s)
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
	if p.unit != "" && p.done > 0 && phase > 0 {
		fields = append(fields, fmt.Sprintf("%.1f/s", float64(p.done)/phase.Seconds()))
	}
	if !final {
		fields = append(fields, roundDuration(took))
		if p.total > 0 && p.done > 0 && p.done < p.total {
			left := time.Duration(float64(phase) * float64(p.total-p.done) / float64(p.done))
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
